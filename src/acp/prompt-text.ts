import type { ContentBlock } from "@agentclientprotocol/sdk";
import type { ImageBlock } from "../model/types.js";

/** A prompt's content as the model gets it: text, and images beside it. */
export interface PromptParts {
  text: string;
  images: ImageBlock[];
}

/**
 * An ACP prompt for the model: text as it is, a linked file as `@path`, an embedded
 * resource's text in a `<context>` block naming it, images as image blocks.
 */
export function promptParts(prompt: readonly ContentBlock[]): PromptParts {
  const texts: string[] = [];
  const images: ImageBlock[] = [];
  for (const block of prompt) {
    switch (block.type) {
      case "text":
        texts.push(block.text);
        break;
      case "resource_link":
        texts.push(`@${block.uri.replace(/^file:\/\//, "")}`);
        break;
      case "resource":
        if ("text" in block.resource) {
          texts.push(`<context ref="${block.resource.uri}">\n${block.resource.text}\n</context>`);
        }
        break;
      case "image":
        images.push({
          type: "image",
          source: { type: "base64", media_type: block.mimeType, data: block.data },
        });
        break;
      default:
        break;
    }
  }
  return { text: texts.join("\n"), images };
}
