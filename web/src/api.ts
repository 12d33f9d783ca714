/** A call's outcome: failures are data the caller shows, never exceptions. */
export type ApiResult<T> =
  | { ok: true; status: number; value: T }
  | { ok: false; status: number; error: string };

/**
 * The gateway's HTTP API with the bearer token. A 401 is reported once
 * through `onUnauthorized` (the page then asks for the one-time link).
 */
export class ApiClient {
  constructor(
    private readonly token: string | null,
    private readonly onUnauthorized: () => void,
  ) {}

  get hasToken(): boolean {
    return this.token !== null;
  }

  get<T>(path: string): Promise<ApiResult<T>> {
    return this.request<T>("GET", path);
  }

  post<T>(path: string, body: unknown): Promise<ApiResult<T>> {
    return this.request<T>("POST", path, body);
  }

  patch<T>(path: string, body: unknown): Promise<ApiResult<T>> {
    return this.request<T>("PATCH", path, body);
  }

  delete<T>(path: string): Promise<ApiResult<T>> {
    return this.request<T>("DELETE", path);
  }

  /** A file's bytes (`GET`, with the token in the header, never in the URL). */
  async blob(path: string): Promise<ApiResult<Blob>> {
    const headers: Record<string, string> = {};
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    let response: Response;
    try {
      response = await fetch(new URL(path.replace(/^\//, ""), apiBase()), { headers });
    } catch (error) {
      return { ok: false, status: 0, error: `gateway unreachable (${String(error)})` };
    }
    if (response.status === 401) this.onUnauthorized();
    if (!response.ok) {
      const text = await response.text().catch(() => "");
      return {
        ok: false,
        status: response.status,
        error: errorText(parseJson(text), text, response),
      };
    }
    return { ok: true, status: response.status, value: await response.blob() };
  }

  /** EventSource cannot send headers, so the stream takes the token as a query parameter. */
  eventsUrl(channelId: string): string {
    const url = new URL(`api/channels/${encodeURIComponent(channelId)}/events`, apiBase());
    if (this.token) url.searchParams.set("token", this.token);
    return url.toString();
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<ApiResult<T>> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    let response: Response;
    try {
      response = await fetch(new URL(path.replace(/^\//, ""), apiBase()), {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (error) {
      return { ok: false, status: 0, error: `gateway unreachable (${String(error)})` };
    }
    const text = await response.text().catch(() => "");
    const parsed = parseJson(text);
    if (response.status === 401) this.onUnauthorized();
    if (!response.ok) {
      return { ok: false, status: response.status, error: errorText(parsed, text, response) };
    }
    return { ok: true, status: response.status, value: parsed as T };
  }
}

/** The page is served at the gateway's root; resolve API paths against it. */
function apiBase(): string {
  return new URL("/", window.location.href).toString();
}

function parseJson(text: string): unknown {
  if (text === "") return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function errorText(parsed: unknown, text: string, response: Response): string {
  if (parsed && typeof parsed === "object") {
    const { error, message } = parsed as { error?: unknown; message?: unknown };
    if (typeof error === "string") return error;
    if (error && typeof error === "object" && "message" in error) {
      return String((error as { message: unknown }).message);
    }
    if (typeof message === "string") return message;
  }
  return text.trim() || `${response.status} ${response.statusText}`;
}
