/** A message delivered while the gateway is not routing (starting, shutting down): 503. */
export class GatewayClosedError extends Error {
  override readonly name = "GatewayClosedError";

  constructor(message = "the gateway is shutting down") {
    super(message);
  }
}
