import { assert } from '../assert.js';

/** A bounded least-recently-used cache (the edge's remembered bearers and key handoffs). */
export class LruCache<V> {
  private readonly entries = new Map<string, V>();

  constructor(private readonly capacity: number) {
    assert(Number.isSafeInteger(capacity) && capacity > 0, 'cache capacity is a positive integer');
  }

  get(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      // Map keeps insertion order: re-inserting marks the entry most recently used.
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * The decider's read cache, bounded: the kernel's memory is bounded by this, not by the
 * size of the book (a miss goes to the store). Two generations instead of one list in use order: a hit in
 * the young generation is one lookup (LruCache re-inserts on every hit, churning the
 * table the decider reads several times per transfer); a hit in the old one moves the
 * entry young. When the young generation fills (half the capacity), it becomes the old
 * one and the old one is dropped whole: at most `capacity` entries are held, and an entry
 * used within the last half-capacity of entries used is kept.
 */
export class GenerationalCache<V> {
  private young = new Map<string, V>();
  private old = new Map<string, V>();
  private readonly generationMax: number;
  /**
   * How many times the store changed under the cache (a round followed, the cache dropped). A
   * value read from the store across a change may be older than what the change set here, so
   * BookReader.load keeps none read across one (intake reads while rounds land).
   */
  private changes = 0;

  constructor(capacity: number) {
    assert(Number.isSafeInteger(capacity) && capacity > 1, 'cache capacity is an integer above one');
    this.generationMax = Math.floor(capacity / 2);
  }

  get(key: string): V | undefined {
    const value = this.young.get(key);
    if (value !== undefined) return value;
    const aging = this.old.get(key);
    if (aging !== undefined) {
      this.old.delete(key);
      this.keepYoung(key, aging);
    }
    return aging;
  }

  set(key: string, value: V): void {
    this.old.delete(key);
    this.keepYoung(key, value);
  }

  private keepYoung(key: string, value: V): void {
    this.young.set(key, value);
    if (this.young.size >= this.generationMax) {
      this.old = this.young;
      this.young = new Map();
    }
  }

  delete(key: string): void {
    this.young.delete(key);
    this.old.delete(key);
  }

  clear(): void {
    this.young.clear();
    this.old.clear();
    this.changes++;
  }

  /** The store changed under the cache: reads begun before now are not kept (changeCount). */
  noteChange(): void {
    this.changes++;
  }

  get changeCount(): number {
    return this.changes;
  }

  get size(): number {
    return this.young.size + this.old.size;
  }
}
