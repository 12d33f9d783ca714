/** Polls at once and then every so often while the page is visible; a hidden tab asks nothing. */
export function pollWhileVisible(milliseconds: number, task: () => Promise<void>): void {
  void task();
  window.setInterval(() => {
    if (!document.hidden) void task();
  }, milliseconds);
}
