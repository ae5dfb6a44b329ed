// Conversations as traffic sends them, generated from a seed (ordinary English, no attack in it),
// for bench:conversations (in process) and bench:monitor --body agent|chat (over HTTP):
// - agent: a system prompt, a task, then steps; step k sends the task and the k tool results so
//   far (search results, a JSON record or a source file of 0.6-2 KB each), as agent frameworks
//   resend them on every call;
// - chat: turns with an assistant; turn k is checked before the model answers (the history and
//   the new question) and after (the same and the answer), as protected completions check it.
// `label` goes into the texts of the conversation (ids, paths, URLs, every turn and every line of
// code), so that conversations of other labels share no tool result or turn with it (their
// sentences come from the same 24 ordinary ones, ordinary-requests.mjs, in other orders).
import { SENTENCES, seeded } from './ordinary-requests.mjs';

/**
 * About `chars` characters of whole ordinary sentences, each tagged with `label`: the sentences
 * are 24, so untagged, two conversations would often share a run of them (a window the encoder
 * reads), which real conversations seldom do.
 */
function ordinaryText(next, chars, label) {
  let text = '';
  while (text.length < chars)
    text += `${text ? ' ' : ''}${SENTENCES[Math.floor(next() * SENTENCES.length)]} [${label}]`;
  return text;
}

const pick = (next, xs) => xs[Math.floor(next() * xs.length)];
const CITIES = ['Lisbon', 'Oslo', 'Porto', 'Kyoto', 'Denver', 'Leeds', 'Quito', 'Graz'];
const ITEMS = ['standing desk', 'hiking boots', 'rice cooker', 'guitar strings', 'desk lamp'];

/** Tool result k of the conversation `label`: search hits, a JSON record or a source file. */
function toolResult(next, label, k) {
  const kind = k % 3;
  if (kind === 0) {
    const query = ordinaryText(next, 60, label);
    const hits = Array.from({ length: 5 }, (_, i) => {
      const city = pick(next, CITIES);
      const url = `https://example.org/${city.toLowerCase()}/${label}/${k}/${i}`;
      return `${i + 1}. ${city} guide ${label}-${k}-${i} (${url})\n   ${ordinaryText(next, 200 + Math.floor(next() * 120), label)}`;
    });
    return { name: 'search_web', args: JSON.stringify({ query }), text: hits.join('\n') };
  }
  if (kind === 1) {
    const order = {
      order_id: `A-${label}-${k}-${Math.floor(next() * 1e6)}`,
      status: pick(next, ['shipped', 'processing', 'delivered']),
      placed_at: `2026-11-${String(1 + Math.floor(next() * 27)).padStart(2, '0')}T10:00:00Z`,
      items: Array.from({ length: 2 + Math.floor(next() * 4) }, () => ({
        name: pick(next, ITEMS),
        quantity: 1 + Math.floor(next() * 3),
        price_eur: Math.round(next() * 30000) / 100,
      })),
      shipping: {
        city: pick(next, CITIES),
        carrier: 'PostNord',
        tracking: `TR-${label}-${k}-${Math.floor(next() * 1e8)}`,
      },
      note: ordinaryText(next, 200, label),
    };
    return {
      name: 'get_order',
      args: JSON.stringify({ order_id: order.order_id }),
      text: JSON.stringify(order, null, 2),
    };
  }
  // Every line names the function, so no window of one file is a window of another's.
  const fn = `merge_${label}_${k}`.replace(/[^A-Za-z0-9_]/g, '_');
  const code = [
    `// src/util/${fn}.ts`,
    `/** ${ordinaryText(next, 90, label)} */`,
    `export function ${fn}(a: number[], b: number[]): number[] {`,
    `  const out: number[] = []; // ${fn}`,
    `  let i = 0; // ${fn}: left`,
    `  let j = 0; // ${fn}: right`,
    `  while (i < a.length && j < b.length) out.push(a[i]! <= b[j]! ? a[i++]! : b[j++]!); // ${fn}`,
    `  while (i < a.length) out.push(a[i++]!); // ${fn}: rest of a`,
    `  while (j < b.length) out.push(b[j++]!); // ${fn}: rest of b`,
    `  return out; // ${fn}`,
    `} // ${fn}`,
    '',
    `export const ${fn}_cases = [`,
    ...Array.from(
      { length: 6 },
      (_, i) =>
        `  { a: [${i}, ${i + 3}, ${i + k + 7}], b: [${i + 1}, ${i + 9}], label: '${pick(next, ITEMS)}', of: '${fn}' },`,
    ),
    `]; // ${fn}`,
  ].join('\n');
  return { name: 'read_file', args: JSON.stringify({ path: `src/util/${fn}.ts` }), text: code };
}

/**
 * The calls of agent conversation `seed` (messages in the scoring core's shape, tool calls as
 * {id, name, arguments}; `wire: true` for the HTTP API's, {id, type, function: {name,
 * arguments}}): step k sends the task and the first k tool results.
 */
export function agentCalls(seed, steps, label = String(seed), wire = false) {
  const next = seeded(1000 + seed);
  const messages = [
    {
      role: 'system',
      content:
        'You are a careful research and shopping assistant. Use the tools search_web, get_order ' +
        'and read_file when they help, cite what you used, and ask before placing any order.',
    },
    {
      role: 'user',
      content: `Ticket ${label}: ${ordinaryText(next, 160, label)} Please use the tools as needed.`,
    },
  ];
  const calls = [];
  for (let k = 1; k <= steps; k++) {
    const r = toolResult(next, label, k);
    const id = `call_${k}`;
    const call = wire
      ? { id, type: 'function', function: { name: r.name, arguments: r.args } }
      : { id, name: r.name, arguments: r.args };
    messages.push(
      { role: 'assistant', content: '', tool_calls: [call] },
      { role: 'tool', content: r.text, tool_call_id: id, name: r.name },
    );
    calls.push(structuredClone(messages));
  }
  return calls;
}

/** The calls of chat `seed`: before and after each of its `turns` answers. */
export function chatCalls(seed, turns, label = String(seed)) {
  const next = seeded(2000 + seed);
  const messages = [
    { role: 'system', content: `You are a friendly, concise assistant (session ${label}).` },
  ];
  const calls = [];
  for (let k = 1; k <= turns; k++) {
    const question = ordinaryText(next, 80 + Math.floor(next() * 170), `${label}-${k}`);
    messages.push({ role: 'user', content: question });
    calls.push(structuredClone(messages));
    messages.push({
      role: 'assistant',
      content: `About ${label}-${k}: ${ordinaryText(next, 400 + Math.floor(next() * 500), `${label}-${k}`)}`,
    });
    calls.push(structuredClone(messages));
  }
  return calls;
}

/** Ordinary requests in Vietnamese, hand-written: what the multilingual reader reads. */
const VIETNAMESE = [
  'Làm thế nào để nấu phở bò ngon tại nhà cho sáu người?',
  'Tôi nên mang gì khi đi bộ đường dài ở Sa Pa vào tháng mười?',
  'Bạn có thể giải thích lãi kép bằng một ví dụ đơn giản không?',
  'Hãy gợi ý ba món quà sinh nhật cho bé gái bảy tuổi thích khủng long.',
  'Viết giúp tôi một email lịch sự gửi chủ nhà về chiếc máy sưởi bị hỏng.',
  'Những loại rau nào có thể trồng trên ban công nhỏ vào mùa thu?',
  'Tóm tắt nguyên nhân chính của Cách mạng Pháp trong năm gạch đầu dòng.',
  'Làm sao để chuẩn bị cho cuộc chạy 10 km trong tám tuần?',
];

/**
 * The checks of `count` protected completions in Vietnamese (request `label`-i): each request
 * checked before the model answers, then with its answer, as protected completions check it.
 */
export function completionCalls(seed, count, label = String(seed)) {
  const next = seeded(3000 + seed);
  const calls = [];
  for (let i = 0; i < count; i++) {
    const question = `${VIETNAMESE[Math.floor(next() * VIETNAMESE.length)]} [${label}-${i}]`;
    calls.push([{ role: 'user', content: question }]);
    calls.push([
      { role: 'user', content: question },
      { role: 'assistant', content: `Đây là vài gợi ý hữu ích cho bạn [${label}-${i}].` },
    ]);
  }
  return calls;
}
