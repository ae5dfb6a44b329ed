/** The text shown and the finish reason of an OpenAI chat-completions event stream, read as a client would. */
export function chatStreamText(body: string): { text: string; finish: string | null } {
  let text = '';
  let finish: string | null = null;
  for (const line of body.split('\n')) {
    if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
    const chunk = JSON.parse(line.slice(6)) as {
      choices: { delta: { content?: string | null }; finish_reason: string | null }[];
    };
    text += chunk.choices[0]?.delta.content ?? '';
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  return { text, finish };
}
