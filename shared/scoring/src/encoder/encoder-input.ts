/** Token ids the encoder reads: "role: text", cut to its opening and its end, in [CLS] ... [SEP]. */
import type { WordPieceTokenizer } from '../ml/wordpiece.js';
import type { EncoderItem, EncoderManifest } from './encoder.js';

/** Characters read from a text: the training cut (finetune.py reads the first 4,000 too). */
export const MAX_CHARS = 4000;

export function encoderIds(
  tokenizer: WordPieceTokenizer,
  ids: { cls: number; sep: number },
  manifest: Pick<EncoderManifest, 'head_tokens' | 'tail_tokens'>,
  item: EncoderItem,
): number[] {
  let body = tokenizer.encode(`${item.role}: ${item.text.slice(0, MAX_CHARS)}`);
  const { head_tokens: head, tail_tokens: tail } = manifest;
  if (body.length > head + tail) body = [...body.slice(0, head), ...body.slice(-tail)];
  return [ids.cls, ...body, ids.sep];
}
