/**
 * The agent's markdown as safe HTML: parsed by marked, then sanitised by DOMPurify, so no HTML
 * or script the model or a tool wrote ever runs (script, iframe, event attributes and
 * `javascript:` links are removed; links open in a new tab with `rel="noopener noreferrer"`).
 * Code blocks are highlighted by highlight.js's core with a handful of languages registered
 * (about 45 kB minified instead of the 900 kB of every language) and get a Copy button.
 */
import DOMPurify from "dompurify";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import { Marked } from "marked";
import { h } from "./dom.js";

const languages = {
  bash,
  css,
  diff,
  go,
  javascript,
  json,
  python,
  rust,
  sql,
  typescript,
  xml,
  yaml,
};
for (const [name, language] of Object.entries(languages)) hljs.registerLanguage(name, language);
hljs.registerAliases(["sh", "shell", "zsh", "console"], { languageName: "bash" });
hljs.registerAliases(["ts", "tsx"], { languageName: "typescript" });
hljs.registerAliases(["js", "jsx", "mjs", "cjs"], { languageName: "javascript" });
hljs.registerAliases(["html", "svg"], { languageName: "xml" });
hljs.registerAliases(["py"], { languageName: "python" });
hljs.registerAliases(["yml"], { languageName: "yaml" });

const marked = new Marked({ gfm: true, breaks: false, async: false });

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A" && node.hasAttribute("href")) {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
});

/** Sanitised HTML for `text` (markdown); never throws. */
export function markdownHtml(text: string): string {
  let html: string;
  try {
    html = marked.parse(text) as string;
  } catch {
    html = "";
  }
  return DOMPurify.sanitize(html, {
    FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select"],
    FORBID_ATTR: ["style"],
  });
}

/** Fills `target` with `text` rendered; code blocks highlighted and given a Copy button. */
export function renderMarkdown(target: HTMLElement, text: string): void {
  target.innerHTML = markdownHtml(text);
  for (const code of target.querySelectorAll<HTMLElement>("pre > code")) decorateCode(code);
}

function decorateCode(code: HTMLElement): void {
  const pre = code.parentElement;
  if (!pre) return;
  const declared = /language-([\w+-]+)/.exec(code.className)?.[1];
  const language = declared && hljs.getLanguage(declared) ? declared : undefined;
  const source = code.textContent ?? "";
  if (language) {
    // highlight.js escapes the source it is given; its output holds only its own spans.
    code.innerHTML = hljs.highlight(source, { language, ignoreIllegals: true }).value;
    code.classList.add("hljs");
  }
  const copy = h(
    "button",
    { type: "button", class: "copy-code", "data-testid": "copy-code", "aria-label": "Copy code" },
    "Copy",
  );
  copy.addEventListener("click", () => {
    void copyText(source).then((copied) => {
      copy.textContent = copied ? "Copied" : "Copy failed";
      window.setTimeout(() => {
        copy.textContent = "Copy";
      }, 1500);
    });
  });
  const frame = h("div", { class: "code-block", "data-language": declared ?? "" });
  pre.replaceWith(frame);
  frame.append(copy, pre);
}

/** The clipboard API where the page is a secure context; a hidden textarea elsewhere. */
async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = h("textarea", { class: "visually-hidden" }, text);
    document.body.append(area);
    area.select();
    const copied = document.execCommand("copy");
    area.remove();
    return copied;
  }
}

/**
 * Renders streamed text at most once per animation frame: the whole text so far is rendered
 * again each time (markdown's meaning can change with the next character, e.g. a closing
 * fence), so nothing is lost and nothing flickers between frames.
 */
export class StreamingMarkdown {
  private text = "";
  private frame: number | null = null;

  constructor(readonly element: HTMLElement) {}

  get value(): string {
    return this.text;
  }

  append(delta: string): void {
    this.text += delta;
    if (this.frame !== null) return;
    this.frame = window.requestAnimationFrame(() => {
      this.frame = null;
      this.flush();
    });
  }

  /** Renders now (the turn ended, or a test reads the log). */
  flush(): void {
    if (this.frame !== null) {
      window.cancelAnimationFrame(this.frame);
      this.frame = null;
    }
    renderMarkdown(this.element, this.text);
  }
}
