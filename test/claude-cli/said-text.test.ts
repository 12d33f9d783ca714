/** What the model said before a result becomes that result's text, whole, in order, bounded. */
import { describe, expect, it } from "vitest";
import { SaidText, withSaid } from "../../src/claude-cli/said-text.js";

describe("withSaid", () => {
  it("keeps every message's text, the pieces of one message joined as they are", () => {
    const said = new SaidText();
    said.add("Let me look.", "m1");
    said.add("The file ", "m2");
    said.add("says hi.", "m2");
    const line = withSaid({ type: "result", result: "The file says hi." }, said.take());
    expect(line.result).toBe("Let me look.\n\nThe file says hi.");
    expect(said.take().texts).toEqual([]);
  });

  it("adds the CLI's own text when it is not the last thing said, and leaves errors alone", () => {
    const said = new SaidText();
    said.add("Working.", "m1");
    expect(withSaid({ result: "Stopped by a hook." }, said.take()).result).toBe(
      "Working.\n\nStopped by a hook.",
    );
    said.add("Working.", "m1");
    expect(withSaid({ result: "boom", is_error: true }, said.take()).result).toBe("boom");
    expect(withSaid({ result: "only the result" }, said.take()).result).toBe("only the result");
  });

  it("keeps at most its bound, with a note of how much was cut", () => {
    const said = new SaidText(10);
    said.add("0123456789abcdef", "m1");
    said.add("more", "m2");
    const line = withSaid({ result: "cut by the writer" }, said.take());
    expect(line.result).toMatch(/^0123456789\n\[rudder: 10 more characters not shown/);
  });
});
