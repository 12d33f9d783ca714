export const EXTERNAL_CONTENT_START = "[EXTERNAL CONTENT]";
export const EXTERNAL_CONTENT_END = "[END EXTERNAL CONTENT]";

const MARKER = /\[\s*(end\s+)?external\s+content\s*\]/gi;

/**
 * Fences text that came from outside (a chat user, a web page) so the model can tell it from
 * instructions. Marker strings inside the text are turned into parentheses first, so the text
 * cannot close the fence early or open a fake one.
 */
export function wrapExternalContent(text: string): string {
  const neutralised = text.replace(MARKER, (_marker, end: string | undefined) =>
    end ? "(END EXTERNAL CONTENT)" : "(EXTERNAL CONTENT)",
  );
  return `${EXTERNAL_CONTENT_START}\n${neutralised}\n${EXTERNAL_CONTENT_END}`;
}
