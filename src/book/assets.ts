import { decodeAsset } from '../model/codec.js';
import { assetsMax } from '../constants.js';
import type { Asset } from '../model/model.js';
import type { ReadView } from '../store/port.js';
import { keys, prefixEnd } from '../model/keys.js';

/** Every registered asset (bounded by assetsMax), kept in memory by the kernel. */
export async function loadAssets(view: ReadView): Promise<Map<string, Asset>> {
  const assets = new Map<string, Asset>();
  for await (const [, value] of view.entries({ gte: keys.assetPrefix, lt: prefixEnd(keys.assetPrefix), limit: assetsMax })) {
    const asset = decodeAsset(value);
    assets.set(asset.id, asset);
  }
  return assets;
}
