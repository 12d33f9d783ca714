/** byteSize: the one size formatter of the messages people and agents read. */
import { describe, expect, it } from "vitest";
import { byteSize } from "../../src/tools/byte-size.js";

describe("byteSize", () => {
  it("says bytes under 1 KiB", () => {
    expect(byteSize(0)).toBe("0 bytes");
    expect(byteSize(1)).toBe("1 byte");
    expect(byteSize(1023)).toBe("1023 bytes");
  });

  it("uses powers of 1024 with one decimal, none when it is 0", () => {
    expect(byteSize(1024)).toBe("1 KiB");
    expect(byteSize(70 * 1024 + 10)).toBe("70 KiB");
    expect(byteSize(1536)).toBe("1.5 KiB");
    expect(byteSize(20 * 1024 * 1024)).toBe("20 MiB");
    expect(byteSize(1.25 * 1024 ** 3)).toBe("1.3 GiB");
    expect(byteSize(3 * 1024 ** 4)).toBe("3 TiB");
    expect(byteSize(2048 * 1024 ** 4)).toBe("2048 TiB");
  });

  it("moves to the next unit where the rounded number would reach 1024", () => {
    expect(byteSize(1024 * 1024 - 1)).toBe("1 MiB");
  });
});
