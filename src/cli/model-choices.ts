import { resolveModelAlias } from "../model/model-config.js";
import type { ModelChoice } from "../protocol/host-controls.js";

const FAMILIES = [
  { value: "opus", displayName: "Opus", description: "for complex tasks" },
  { value: "sonnet", displayName: "Sonnet", description: "for everyday tasks" },
  { value: "haiku", displayName: "Haiku", description: "fastest for quick answers" },
];

/**
 * The models `initialize` offers, as Claude Code lists them: `default` (the model the session
 * started with) and the family aliases, each with the id it resolves to.
 */
export function modelChoices(startModel: string): ModelChoice[] {
  return [
    {
      value: "default",
      resolvedModel: startModel,
      displayName: "Default (recommended)",
      description: `Use the default model (currently ${startModel})`,
    },
    ...FAMILIES.map((family) => {
      const resolvedModel = resolveModelAlias(family.value);
      return {
        ...family,
        resolvedModel,
        description: `${resolvedModel}, ${family.description}`,
      };
    }),
  ];
}
