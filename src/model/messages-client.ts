import { BaseAnthropic } from "@anthropic-ai/sdk/client";
import { Messages } from "@anthropic-ai/sdk/resources/messages/messages";

/**
 * The Anthropic SDK's client with only the resource rudder uses. The SDK's
 * full `Anthropic` class builds every resource (beta, files, models, skills,
 * organization ...), which is four fifths of its code: a CLI started for one
 * request pays to compile all of it. Same transport, errors and streaming.
 */
export class MessagesClient extends BaseAnthropic {
  readonly messages: Messages = new Messages(this);
}
