/** One line of the chaos table: a scenario, what was counted, the count, and its goal. */
export interface Figure {
  scenario: string;
  figure: string;
  value: number | string;
  /** What the value should be ("0", "yes", "< 5 s"); empty when it is only reported. */
  goal: string;
  /** Whether the value meets the goal; undefined when there is none. */
  ok?: boolean;
}

export function figure(
  scenario: string,
  name: string,
  value: number | string,
  goal = "",
  ok?: boolean,
): Figure {
  return { scenario, figure: name, value, goal, ...(ok === undefined ? {} : { ok }) };
}

export function mib(value: number): string {
  return `${value.toFixed(1)} MiB`;
}

/** The figures as one Markdown table (as the README shows it). */
export function table(figures: readonly Figure[]): string {
  const rows = figures.map((each) => [
    each.scenario,
    each.figure,
    String(each.value),
    each.goal,
    each.ok === undefined ? "" : each.ok ? "ok" : "MISSED",
  ]);
  const header = ["scenario", "figure", "value", "goal", ""];
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]?.length ?? 0)),
  );
  const line = (cells: string[]) =>
    `| ${cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join(" | ")} |`;
  return [line(header), line(widths.map((width) => "-".repeat(width))), ...rows.map(line)].join(
    "\n",
  );
}

/** Polls `probe` until it returns a value other than undefined/false, or undefined at the deadline. */
export async function poll<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs: number,
): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
