/**
 * One member of a zip archive (a Python wheel) read from memory: the central directory names the
 * member, its local header gives where the data starts; stored or deflated. Enough for a wheel;
 * no zip64, no encryption.
 */
import { inflateRawSync } from 'node:zlib';

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

export function zipMember(zip: Buffer, name: string): Buffer {
  let end = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 0xffff); i--)
    if (zip.readUInt32LE(i) === EOCD) {
      end = i;
      break;
    }
  if (end < 0) throw new Error('not a zip archive (no end of central directory)');
  const entries = zip.readUInt16LE(end + 10);
  let p = zip.readUInt32LE(end + 16);
  for (let k = 0; k < entries; k++) {
    if (zip.readUInt32LE(p) !== CENTRAL) throw new Error('zip central directory is damaged');
    const method = zip.readUInt16LE(p + 10);
    const compressed = zip.readUInt32LE(p + 20);
    const size = zip.readUInt32LE(p + 24);
    const nameLen = zip.readUInt16LE(p + 28);
    const extra = zip.readUInt16LE(p + 30);
    const comment = zip.readUInt16LE(p + 32);
    const local = zip.readUInt32LE(p + 42);
    const entry = zip.toString('utf8', p + 46, p + 46 + nameLen);
    p += 46 + nameLen + extra + comment;
    if (entry !== name) continue;
    if (zip.readUInt32LE(local) !== LOCAL) throw new Error(`zip member ${name}: bad local header`);
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const raw = zip.subarray(start, start + compressed);
    const data = method === 0 ? Buffer.from(raw) : method === 8 ? inflateRawSync(raw) : null;
    if (!data) throw new Error(`zip member ${name}: unsupported compression method ${method}`);
    if (data.length !== size)
      throw new Error(`zip member ${name}: size ${data.length}, expected ${size}`);
    return data;
  }
  throw new Error(`zip archive has no member ${name}`);
}
