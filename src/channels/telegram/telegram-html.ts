/**
 * The agent's markdown as Telegram's HTML (`parse_mode: "HTML"`), chosen over MarkdownV2
 * because its escaping is three characters (`&`, `<`, `>`) instead of eighteen. Fenced code
 * becomes `<pre><code>`, inline code `<code>`, `**bold**` `<b>`, `*italic*` / `_italic_`
 * `<i>`, `~~struck~~` `<s>`, `[text](url)` a link, a heading a bold line; anything else is
 * text, escaped. Markers that do not pair stay as they are.
 */

export function escapeHtml(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

const INLINE =
  /(`[^`\n]+`)|(\*\*[^*\n]+?\*\*)|(__[^_\n]+?__)|(~~[^~\n]+?~~)|(\[[^\]\n]+\]\((?:https?|tg|mailto):[^)\s]+\))|(\*[^*\s][^*\n]*?\*)|((?<![\w])_[^_\s][^_\n]*?_(?![\w]))/g;

function inline(text: string): string {
  let out = "";
  let last = 0;
  for (const match of text.matchAll(INLINE)) {
    const index = match.index ?? 0;
    out += escapeHtml(text.slice(last, index));
    const token = match[0];
    if (match[1]) out += `<code>${escapeHtml(token.slice(1, -1))}</code>`;
    else if (match[2] || match[3]) out += `<b>${inline(token.slice(2, -2))}</b>`;
    else if (match[4]) out += `<s>${inline(token.slice(2, -2))}</s>`;
    else if (match[5]) {
      const close = token.indexOf("](");
      const href = token.slice(close + 2, -1).replaceAll('"', "&quot;");
      out += `<a href="${escapeHtml(href)}">${inline(token.slice(1, close))}</a>`;
    } else out += `<i>${inline(token.slice(1, -1))}</i>`;
    last = index + token.length;
  }
  return out + escapeHtml(text.slice(last));
}

function block(lines: string[]): string {
  return lines
    .map((line) => {
      const heading = /^#{1,6}\s+(.*)$/.exec(line);
      if (heading) return `<b>${inline(heading[1] ?? "")}</b>`;
      const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
      if (bullet) return `${bullet[1]}\u2022 ${inline(bullet[2] ?? "")}`;
      return inline(line);
    })
    .join("\n");
}

/** The HTML of `markdown`, every character outside the tags escaped. */
export function markdownToTelegramHtml(markdown: string): string {
  const lines = markdown.split("\n");
  const out: string[] = [];
  let text: string[] = [];
  for (let index = 0; index < lines.length; index++) {
    const fence = /^\s*```\s*([\w+-]*)\s*$/.exec(lines[index] as string);
    if (!fence) {
      text.push(lines[index] as string);
      continue;
    }
    if (text.length > 0) out.push(block(text));
    text = [];
    const code: string[] = [];
    index += 1;
    while (index < lines.length && !/^\s*```\s*$/.test(lines[index] as string)) {
      code.push(lines[index] as string);
      index += 1;
    }
    const language = fence[1] ? ` class="language-${fence[1]}"` : "";
    out.push(`<pre><code${language}>${escapeHtml(code.join("\n"))}</code></pre>`);
  }
  if (text.length > 0) out.push(block(text));
  return out.join("\n");
}
