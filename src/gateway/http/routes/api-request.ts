/**
 * What every route group of the API shares to read a request: the error it refuses one with
 * (`ApiError`, answered as `{error}` by the app's error handler), the JSON body as a schema
 * wants it, and a channel id from the path.
 */
import { HTTPException } from "hono/http-exception";
import * as v from "valibot";
import { isValidChannelId } from "../../channel-source.js";

/** A request the API refuses, with the status and the `{error}` text it answers. */
export class ApiError extends HTTPException {
  constructor(message: string, status: 400 | 404 | 409 | 413 | 500 | 502 = 400) {
    super(status, { message });
  }
}

/** The body as `schema` wants it; with `optional`, an empty body reads as `{}`. */
export async function readJson<T>(
  request: Request,
  schema: v.GenericSchema<unknown, T>,
  optional = false,
): Promise<T> {
  let body: unknown;
  try {
    const text = await request.text();
    body = optional && text.trim() === "" ? {} : JSON.parse(text);
  } catch {
    throw new ApiError("the body must be valid JSON");
  }
  const parsed = v.safeParse(schema, body);
  if (!parsed.success) throw new ApiError(issueText(parsed.issues[0]));
  return parsed.output;
}

/** One line naming the field: "text is required", "cron: <what is wrong with it>". */
function issueText(issue: v.BaseIssue<unknown>): string {
  const path = v.getDotPath(issue);
  if (path === null) return issue.message;
  const missing = issue.kind === "schema" && issue.type === "object" && issue.input === undefined;
  return missing ? `${path} is required` : `${path}: ${issue.message}`;
}

export function channelParam(value: string | undefined): string {
  if (value === undefined || !isValidChannelId(value)) {
    throw new ApiError("channel ids match [A-Za-z0-9._:-]{1,128} and do not begin with source:");
  }
  return value;
}
