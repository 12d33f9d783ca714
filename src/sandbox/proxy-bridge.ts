/** The port inside the sandbox's own network namespace where the runner's bridge to rudder's proxy listens. */
export const BRIDGE_PORT = 3128;

/** The variables that send HTTP clients inside through the bridge. */
export function proxyEnvironment(): Record<string, string> {
  const address = `http://127.0.0.1:${BRIDGE_PORT}`;
  return {
    HTTP_PROXY: address,
    HTTPS_PROXY: address,
    http_proxy: address,
    https_proxy: address,
    NO_PROXY: "localhost,127.0.0.1,::1",
    no_proxy: "localhost,127.0.0.1,::1",
  };
}
