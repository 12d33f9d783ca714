import type { HostControls } from "../protocol/host-controls.js";
import { ModelSwitch } from "../protocol/model-switch.js";
import type { AgentSetup } from "./agent-setup.js";
import { modelChoices } from "./model-choices.js";

/**
 * The stream-json session's switchable model and the controls a host reaches through
 * control requests: `set_model` (with the setup's credentials), the model list, `mcp_status`.
 */
export function streamJsonControls(setup: AgentSetup): {
  model: ModelSwitch;
  controls: HostControls;
} {
  const model = new ModelSwitch(setup.model, (name) => setup.createModel(name));
  const startModel = setup.model.name;
  return {
    model,
    controls: {
      setModel: (name) => model.select(name),
      models: () => modelChoices(startModel),
      mcpStatus: () => setup.mcpServers.map((server) => ({ ...server })),
    },
  };
}
