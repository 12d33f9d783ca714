/**
 * The page's entry: trades the link's code for a token, then wires the header, the channel
 * list, the open conversation with its composer, and the side panels to the gateway's HTTP API
 * and live events.
 */
import "./markdown.css";
import "./chat.css";
import { ApiClient } from "./api.js";
import { showAuthNotice } from "./auth-notice.js";
import { bindingChoice, showChannelInfo } from "./binding-view.js";
import { ChannelList } from "./channel-list.js";
import { ChannelSettingsControls, channelLabel } from "./channel-settings.js";
import { ComposerAttachments } from "./composer-attachments.js";
import { showConnectionStatus } from "./connection-status.js";
import { ContextControls } from "./context-controls.js";
import { Conversation } from "./conversation.js";
import { byTestId, h } from "./dom.js";
import { EventStream } from "./event-stream.js";
import { showAgentInfo, showHealth } from "./gateway-facts.js";
import { PairingPanel } from "./pairing-panel.js";
import { bindPanelToggles } from "./panel-toggles.js";
import { pollWhileVisible } from "./poll-while-visible.js";
import { rememberChannel, rememberedChannel } from "./remembered-channel.js";
import { RunnersPanel } from "./runners-panel.js";
import { SchedulesPanel } from "./schedules-panel.js";
import { sentFilesView } from "./sent-files.js";
import { SpendPanel } from "./spend-panel.js";
import { TabNotices } from "./tab-notices.js";
import { takeToken } from "./token.js";
import type {
  ChannelSummary,
  Disposition,
  GatewayEvent,
  PermissionRequestInfo,
  StoredMessage,
} from "./types.js";

const defaultChannel = "web";

const pageToken = await takeToken();
const api = new ApiClient(pageToken.token, () => showAuthNotice(pageToken));
if (!pageToken.token || pageToken.linkError) showAuthNotice(pageToken);

const log = byTestId("log");
const title = byTestId("conversation-title");
const connection = byTestId("connection");
const turnStatus = byTestId("turn-status");
const composer = byTestId<HTMLFormElement>("composer");
const input = byTestId<HTMLTextAreaElement>("composer-input");
const composerError = byTestId("composer-error");
const attachments = new ComposerAttachments(composer, input, (line) => {
  composerError.textContent = line;
});
const scheduleChannel = byTestId<HTMLInputElement>("schedule-channel");

const stopButton = byTestId<HTMLButtonElement>("turn-stop");
const notices = new TabNotices();
let busy = false;
let asking = 0;

const context = new ContextControls(
  api,
  byTestId("context-meter"),
  byTestId<HTMLFormElement>("context-actions"),
  byTestId<HTMLInputElement>("compact-focus"),
  byTestId<HTMLButtonElement>("channel-reset"),
  (text) => {
    composerError.textContent = text;
  },
);

function showTurnStatus(): void {
  turnStatus.textContent =
    asking > 0
      ? "The agent is waiting for your decision: allow or deny its request above."
      : busy
        ? "The agent is working. A message sent now steers the turn."
        : "";
}

const conversation = new Conversation(
  log,
  (working) => {
    busy = working;
    showTurnStatus();
    composer.dataset.busy = String(working);
    stopButton.hidden = !working;
    stopButton.disabled = false;
    if (!working) void refreshChannels();
  },
  async (request, decision, message, always) => {
    const result = await api.post<{ request: PermissionRequestInfo }>(
      `/api/channels/${encodeURIComponent(request.channelId)}/permissions/${encodeURIComponent(request.id)}`,
      { decision, ...(message === undefined ? {} : { message }), ...(always ? { always } : {}) },
    );
    if (result.ok) return null;
    return { error: result.error, settled: result.status === 404 || result.status === 409 };
  },
  (pending) => {
    asking = pending;
    showTurnStatus();
  },
  (usage) => context.showUsage(usage),
  { retry: (text) => void send(text), files: (message) => sentFilesView(api, message) },
);

let channelId: string | null = null;
let stream: EventStream | null = null;
let selection: AbortController | null = null;

const channels = new ChannelList(byTestId("channel-list"), (id) => void openChannel(id));

/**
 * Shows a channel: its stored messages, then its live events. Events that
 * arrive while the history loads wait, so the log stays in order.
 */
async function openChannel(id: string, again = false): Promise<void> {
  if (!again) delete document.body.dataset.panel;
  if (id === channelId && !again) return;
  selection?.abort();
  stream?.close();
  const current = new AbortController();
  selection = current;
  channelId = id;
  rememberChannel(id);
  showName(id);
  if (!scheduleChannel.value || scheduleChannel.dataset.auto === "true") {
    scheduleChannel.value = id;
    scheduleChannel.dataset.auto = "true";
  }
  conversation.clear();
  composerError.textContent = "";
  context.show(id, listed.get(id)?.context);
  void showChannelInfo(
    api,
    id,
    () => channelId === id,
    () => showAgentInfo(api),
  );

  const waiting: GatewayEvent[] = [];
  let loaded = false;
  stream = new EventStream(api.eventsUrl(id), {
    onEvent: (event) => {
      // Back after a break, and events of the break are gone from the gateway's memory: the
      // stored messages have what they said, so the channel is shown again from the store.
      if (event.type === "events_dropped" && event.resumed) {
        void openChannel(id, true);
        return;
      }
      notices.see(event, id);
      // A turn's end (and its answer stored with its record): what it spent is in the report.
      if (event.type === "turn_end" || event.type === "reply") void spend?.refresh();
      if (loaded) conversation.apply(event);
      else waiting.push(event);
    },
    onStatus: (status) => {
      showConnectionStatus(connection, status);
      // A refused stream is not retried by the browser; try again from scratch a little later.
      if (status !== "closed") return;
      window.setTimeout(() => {
        if (!current.signal.aborted) void openChannel(id, true);
      }, 5000);
    },
  });
  const limit = historyLimits.get(id) ?? HISTORY_PAGE;
  const history = await api.get<{ messages: StoredMessage[] }>(
    `/api/channels/${encodeURIComponent(id)}/messages?limit=${limit}`,
  );
  if (current.signal.aborted) return;
  if (history.ok) {
    // The newest page first; a full page may have older messages before it.
    if (history.value.messages.length >= limit) log.append(earlierButton(id, limit));
    conversation.showHistory(history.value.messages);
  } else if (history.status !== 404) composerError.textContent = `Could not load: ${history.error}`;
  const asking = await api.get<{ requests: PermissionRequestInfo[] }>(
    `/api/channels/${encodeURIComponent(id)}/permissions`,
  );
  if (current.signal.aborted) return;
  loaded = true;
  for (const event of waiting.splice(0)) conversation.apply(event);
  // The stream replays recent requests in place; this finds ones older than its buffer.
  // A card for a request settled meanwhile learns so when its button gets a 404 or 409.
  if (asking.ok) conversation.showPermissions(asking.value.requests);
}

/** Messages a channel opens with: the newest, so that a long channel opens fast. */
const HISTORY_PAGE = 100;
/** How many messages each channel shows now (more after "Show earlier messages"). */
const historyLimits = new Map<string, number>();

function earlierButton(id: string, limit: number): HTMLElement {
  const button = h(
    "button",
    { type: "button", class: "small earlier", "data-testid": "history-earlier" },
    "Show earlier messages",
  );
  button.addEventListener("click", () => {
    historyLimits.set(id, limit + HISTORY_PAGE);
    void openChannel(id, true);
  });
  return button;
}

/** Sends the message box's text and files, or `again` (a failed message's Retry). */
async function send(again?: string): Promise<void> {
  const text = again ?? input.value.trim();
  const withFiles = again === undefined && attachments.count > 0;
  if ((!text && !withFiles) || !channelId) return;
  const id = channelId;
  if (again === undefined) input.value = "";
  composerError.textContent = "";
  const taken = withFiles ? await attachments.take() : { files: [], attachments: [] };
  const shown = [text, ...taken.files.map((file) => `[${file.name || file.type}]`)];
  const key = conversation.showPending(shown.filter(Boolean).join("\n"));
  const result = await api.post<{ id: string; disposition: Disposition }>(
    `/api/channels/${encodeURIComponent(id)}/messages`,
    taken.attachments.length > 0 ? { text, attachments: taken.attachments } : { text },
  );
  if (id !== channelId) return;
  if (result.ok) {
    conversation.settlePending(key, result.value.id, result.value.disposition);
    void refreshChannels();
    return;
  }
  conversation.dropPending(key);
  if (!input.value) input.value = text;
  attachments.restore(taken.files);
  composerError.textContent = `Not sent: ${result.error}`;
}

/** The running turn's Stop: interrupts it; the agent process and the conversation stay. */
stopButton.addEventListener("click", async () => {
  if (!channelId) return;
  stopButton.disabled = true;
  const result = await api.post(`/api/channels/${encodeURIComponent(channelId)}/interrupt`, {});
  if (!result.ok) {
    stopButton.disabled = false;
    composerError.textContent = `Not stopped: ${result.error}`;
  }
});

composer.addEventListener("submit", (event) => {
  event.preventDefault();
  notices.ask();
  void send();
});
input.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    notices.ask();
    void send();
  }
});

byTestId<HTMLFormElement>("new-channel-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const field = byTestId<HTMLInputElement>("new-channel-input");
  const name = field.value.trim();
  if (!name || !field.checkValidity()) return;
  field.value = "";
  channels.open(channelName(name));
  input.focus();
});
bindPanelToggles();

scheduleChannel.addEventListener("input", () => {
  scheduleChannel.dataset.auto = "false";
});

/** The channels as last listed, for their context usage and names. */
const listed = new Map<string, ChannelSummary>();
const settings = new ChannelSettingsControls(
  api,
  () => void refreshChannels(),
  (removed) => {
    listed.delete(removed);
    void refreshChannels().then(() => {
      channels.open(channels.ids.find((id) => id !== removed) ?? defaultChannel);
    });
  },
);
title.after(settings.element);

/** The open channel's name in the head and the tab, and its Rename, Archive and Delete. */
function showName(id: string): void {
  const channel = listed.get(id);
  title.textContent = channel ? channelLabel(channel) : id;
  title.title = id;
  document.title = `${title.textContent} \u00b7 rudder`;
  settings.show(channel);
}

async function refreshChannels(): Promise<void> {
  const result = await api.get<{ channels: ChannelSummary[] }>("/api/channels");
  if (!result.ok) return;
  channels.show(result.value.channels);
  listed.clear();
  for (const channel of result.value.channels) listed.set(channel.id, channel);
  if (channelId !== null && listed.has(channelId)) {
    context.showUsage(listed.get(channelId)?.context ?? null);
    showName(channelId);
  }
}

/** The side panel's Spend section, refreshed every 10 s and at each turn's end. */
let spend: SpendPanel | undefined;

/** A typed name as a channel id: on the binding chosen beside it, if any. */
let channelName = (name: string) => name;

async function start(): Promise<void> {
  void showHealth(api);
  await refreshChannels();
  void bindingChoice(api).then((named) => {
    channelName = named;
  });
  channels.open(rememberedChannel() ?? channels.ids[0] ?? defaultChannel);
  const runners = new RunnersPanel(api, byTestId("runner-list"), byTestId("runners-error"));
  const schedules = new SchedulesPanel(
    api,
    byTestId("schedule-list"),
    byTestId<HTMLFormElement>("schedule-form"),
    byTestId("schedules-error"),
  );
  pollWhileVisible(3000, () => runners.refresh());
  pollWhileVisible(15000, () => schedules.refresh());
  const side = document.querySelector<HTMLElement>("aside.side");
  if (side) {
    const pairings = new PairingPanel(api, side);
    pollWhileVisible(15000, () => pairings.refresh());
    const panel = new SpendPanel(api, side);
    spend = panel;
    pollWhileVisible(10000, () => panel.refresh());
  }
  window.setInterval(() => {
    if (!document.hidden) void refreshChannels();
  }, 5000);
}

void start();
