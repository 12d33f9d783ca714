/**
 * Markdown (the agent's) as Slack's mrkdwn: `**bold**` is `*bold*`, `*italic*` is `_italic_`,
 * `~~struck~~` is `~struck~`, `[text](url)` is `<url|text>`, headings are bold lines, list
 * bullets are `\u2022` (a bullet); code spans and fenced blocks keep their backticks (a fence loses its
 * language, which Slack would show as code); `&`, `<` and `>` are escaped everywhere but in
 * the links it makes and a line's leading quote marker, as Slack asks.
 */

/** Slack's three control characters as entities. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

const FENCE = /^\s*(```|~~~)/;

export function markdownToMrkdwn(markdown: string): string {
  const lines = markdown.replace(/\r\n/g, "\n").split("\n");
  const out: string[] = [];
  let fence: string | undefined;
  for (const line of lines) {
    const marker = FENCE.exec(line)?.[1];
    if (fence !== undefined) {
      if (marker === fence) {
        out.push("```");
        fence = undefined;
      } else out.push(escapeMrkdwn(line));
      continue;
    }
    if (marker !== undefined) {
      fence = marker;
      out.push("```");
      continue;
    }
    out.push(convertLine(line));
  }
  if (fence !== undefined) out.push("```");
  return out.join("\n");
}

function convertLine(line: string): string {
  const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
  // A heading is bold already: bold inside it would end it early.
  if (heading) return `*${convertInline((heading[1] ?? "").replace(/\*\*|__/g, ""))}*`;
  const quote = /^(\s*>+\s?)(.*)$/.exec(line);
  if (quote) return `>${quote[2] === "" ? "" : ` ${convertInline(quote[2] ?? "")}`}`;
  const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
  if (bullet) return `${bullet[1]}\u2022 ${convertInline(bullet[2] ?? "")}`;
  if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) return "\u2500\u2500\u2500";
  return convertInline(line);
}

/** Code spans are set aside first, so nothing inside them is converted. */
function convertInline(text: string): string {
  const kept: string[] = [];
  const keep = (value: string) => {
    kept.push(value);
    return `\uE000${kept.length - 1}\uE000`;
  };
  let result = text.replace(/`([^`\n]+)`/g, (_whole, code: string) =>
    keep(`\`${escapeMrkdwn(code)}\``),
  );
  result = result.replace(
    /!?\[([^\]\n]*)\]\((https?:\/\/[^\s)]+)\)/g,
    (_whole, label: string, url: string) =>
      keep(`<${url.replace(/\|/g, "%7C")}|${escapeMrkdwn(label || url)}>`),
  );
  result = escapeMrkdwn(result);
  result = result.replace(/\*\*\*(?=\S)(.+?)(?<=\S)\*\*\*/g, "\uE001_$1_\uE001");
  result = result.replace(
    /(\*\*|__)(?=\S)(.+?)(?<=\S)\1/g,
    (_whole, _mark, inner: string) => `\uE001${inner}\uE001`,
  );
  result = result.replace(/(^|[^\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?!\w)/g, "$1_$2_");
  result = result.replace(/~~(?=\S)(.+?)(?<=\S)~~/g, "~$1~");
  result = result.replace(/\uE001/g, "*");
  return result.replace(/\uE000(\d+)\uE000/g, (_whole, index: string) => kept[Number(index)] ?? "");
}
