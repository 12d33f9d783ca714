/** The channel the page showed last, kept in localStorage so the next visit opens it again. */
const channelKey = "rudder.channel";

export function rememberChannel(id: string): void {
  try {
    window.localStorage.setItem(channelKey, id);
  } catch {
    // Without storage the page starts on the first channel next time.
  }
}

export function rememberedChannel(): string | null {
  try {
    return window.localStorage.getItem(channelKey);
  } catch {
    return null;
  }
}
