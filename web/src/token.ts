const storageKey = "rudder.token";

/**
 * The API token. The one-time link carries it as `#token=...`: it is kept in
 * localStorage and taken out of the address bar, so it is neither bookmarked
 * nor left in history. Later visits use the stored token.
 */
export function takeToken(): string | null {
  const parameters = new URLSearchParams(window.location.hash.slice(1));
  const fromLink = parameters.get("token");
  if (fromLink) {
    try {
      window.localStorage.setItem(storageKey, fromLink);
    } catch {
      // Storage may be disabled; the token still works for this visit.
    }
    parameters.delete("token");
    const rest = parameters.toString();
    const { pathname, search } = window.location;
    window.history.replaceState(null, "", `${pathname}${search}${rest ? `#${rest}` : ""}`);
    return fromLink;
  }
  try {
    return window.localStorage.getItem(storageKey);
  } catch {
    return null;
  }
}
