const storageKey = "rudder.token";

export interface PageToken {
  token: string | null;
  /** Why the link's code was not traded (used, expired, unknown), when it was not. */
  linkError?: string;
}

function storedToken(): string | null {
  try {
    return window.localStorage.getItem(storageKey);
  } catch {
    return null;
  }
}

/** Takes `#code=...` out of the address, so it is neither bookmarked nor left in history. */
function takeCode(): string | null {
  const parameters = new URLSearchParams(window.location.hash.slice(1));
  const code = parameters.get("code");
  if (code === null) return null;
  parameters.delete("code");
  const rest = parameters.toString();
  const { pathname, search } = window.location;
  window.history.replaceState(null, "", `${pathname}${search}${rest ? `#${rest}` : ""}`);
  return code;
}

/**
 * The API token. The link `rudder serve` or `rudder link` prints carries a single-use code
 * (`#code=...`, valid 10 minutes) that the page trades for the token once, then keeps the
 * token in localStorage; later visits use the stored token.
 */
export async function takeToken(): Promise<PageToken> {
  const code = takeCode();
  if (code === null) return { token: storedToken() };
  let answer: { token?: unknown; error?: unknown } = {};
  try {
    const response = await fetch(new URL("api/link-codes/redeem", window.location.href), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ code }),
    });
    answer = (await response.json().catch(() => ({}))) as typeof answer;
  } catch (error) {
    return { token: storedToken(), linkError: `gateway unreachable (${String(error)})` };
  }
  if (typeof answer.token !== "string") {
    const error = typeof answer.error === "string" ? answer.error : "the link was refused";
    return { token: storedToken(), linkError: error };
  }
  try {
    window.localStorage.setItem(storageKey, answer.token);
  } catch {
    // Storage may be disabled; the token still works for this visit.
  }
  return { token: answer.token };
}
