/** Where the gateway keeps its state: SQLite in the data folder, or a PostgreSQL database. */
export type StoreLocation = { kind: "sqlite" } | { kind: "postgres"; url: string };

/**
 * What `--store` (or `RUDDER_STORE`) names: nothing for SQLite in the data folder (the default),
 * or a `postgres://` / `postgresql://` URL. Anything else is an `Error` to show the user.
 */
export function storeLocation(value: string | undefined): StoreLocation | Error {
  if (value === undefined || value.trim() === "") return { kind: "sqlite" };
  if (/^postgres(ql)?:\/\//i.test(value)) return { kind: "postgres", url: value };
  return new Error(
    `--store must be a postgres:// URL (got "${redactedUrl(value)}"); without it the gateway uses SQLite in --data`,
  );
}

/**
 * The URL with its password, if any, replaced by `***` (in the user part and in a `password=`
 * parameter): what logs and errors may show.
 */
export function redactedUrl(url: string): string {
  const scheme = url.indexOf("://");
  if (scheme === -1) return url;
  const start = scheme + 3;
  const slash = url.slice(start).search(/[/?#]/);
  const end = slash === -1 ? url.length : start + slash;
  const authority = url.slice(start, end);
  const at = authority.lastIndexOf("@");
  const colon = authority.indexOf(":");
  const hidden =
    at !== -1 && colon !== -1 && colon < at
      ? `${authority.slice(0, colon)}:***${authority.slice(at)}`
      : authority;
  const rest = url.slice(end).replace(/([?&]password=)[^&#]*/gi, "$1***");
  return url.slice(0, start) + hidden + rest;
}
