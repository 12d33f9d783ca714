import { describe, expect, it } from "vitest";
import { LightHeaders } from "../../src/model/light-headers.js";

type Operation =
  | ["append" | "set", string, string]
  | ["delete" | "get" | "has", string]
  | ["getSetCookie"];

/** Everything observable about a Headers object after a list of operations, or the error. */
function observe(make: (init?: never) => Headers, init: unknown, operations: Operation[]): unknown {
  try {
    const headers = make(init as never);
    const answers: unknown[] = [];
    for (const [method, ...args] of operations) {
      answers.push((headers[method] as (...values: string[]) => unknown)(...args));
    }
    const forEachSeen: string[][] = [];
    headers.forEach((value, name) => {
      forEachSeen.push([name, value]);
    });
    return {
      answers,
      entries: [...headers.entries()],
      keys: [...headers.keys()],
      values: [...headers.values()],
      iterated: [...headers],
      forEachSeen,
      tag: Object.prototype.toString.call(headers),
    };
  } catch (error) {
    return { threw: (error as Error).constructor.name };
  }
}

const cases: Array<[string, unknown, Operation[]]> = [
  [
    "empty",
    undefined,
    [
      ["get", "x"],
      ["has", "x"],
    ],
  ],
  [
    "record init, mixed case",
    { "Content-Type": "text/plain", "X-B": "2" },
    [["get", "content-type"]],
  ],
  [
    "pair init, repeated names join with a comma",
    [
      ["Accept", "a"],
      ["accept", "b"],
    ],
    [["get", "ACCEPT"]],
  ],
  ["another Headers as init", new Headers({ b: "1", a: "2" }), []],
  ["sorted iteration", { zeta: "1", Alpha: "2", "m-id": "3" }, []],
  [
    "set-cookie stays separate when iterated",
    undefined,
    [
      ["append", "Set-Cookie", "a=1"],
      ["append", "set-cookie", "b=2"],
      ["append", "x", "1"],
      ["get", "set-cookie"],
      ["getSetCookie"],
    ],
  ],
  [
    "set replaces every value, delete removes",
    undefined,
    [
      ["append", "x", "1"],
      ["append", "x", "2"],
      ["set", "X", "3"],
      ["get", "x"],
      ["append", "y", "1"],
      ["delete", "Y"],
      ["has", "y"],
    ],
  ],
  [
    "surrounding whitespace is trimmed",
    undefined,
    [
      ["set", "x", " \t value \r\n"],
      ["get", "x"],
    ],
  ],
  [
    "inner whitespace is kept",
    undefined,
    [
      ["set", "x", "a  b\tc"],
      ["get", "x"],
    ],
  ],
  [
    "empty value",
    undefined,
    [
      ["set", "x", ""],
      ["get", "x"],
      ["has", "x"],
    ],
  ],
  ["invalid name", undefined, [["set", "bad name", "1"]]],
  ["invalid name in get", undefined, [["get", "bad:name"]]],
  ["empty name", undefined, [["append", "", "1"]]],
  ["newline in value", undefined, [["set", "x", "a\nb"]]],
  ["NUL in value", undefined, [["set", "x", "a\u0000b"]]],
  ["non-Latin-1 value", undefined, [["set", "x", "\u20ac"]]],
  [
    "Latin-1 value",
    undefined,
    [
      ["set", "x", "caf\u00e9"],
      ["get", "x"],
    ],
  ],
  ["pair of three", [["a", "1", "2"]], []],
  ["pair that is not a list", [5], []],
  ["init that is a string", "a: 1", []],
  ["number value becomes a string", { x: 5 }, [["get", "x"]]],
];

describe("LightHeaders behaves as Node's Headers", () => {
  it.each(cases)("%s", (_name, init, operations) => {
    const expected = observe((value) => new Headers(value), init, operations);
    const actual = observe((value) => new LightHeaders(value), init, operations);
    expect(actual).toEqual(expected);
  });

  it("is accepted by Node's Headers, and accepts it", () => {
    const light = new LightHeaders({ a: "1" });
    light.append("set-cookie", "x=1");
    light.append("set-cookie", "y=2");
    expect([...new Headers(light)]).toEqual([...light]);
    expect([...new LightHeaders(new Headers(light))]).toEqual([...light]);
  });

  it("passes itself and a thisArg to forEach", () => {
    const headers = new LightHeaders({ a: "1" });
    const context = { seen: [] as unknown[] };
    headers.forEach(function (this: typeof context, value, name, parent) {
      this.seen.push(value, name, parent);
    }, context);
    expect(context.seen).toEqual(["1", "a", headers]);
  });
});
