// The course example's side of memplay's embed API (README, "The embed API"): every message a
// frame posts is written into the log as one line of text, and the buttons beside a frame post it
// a setting. A message is read only from one of this page's frames, at the origin its address
// names, and is shown as text (textContent), never as HTML.
"use strict";

(() => {
  const log = document.querySelector("[data-testid='host-log']");
  const frames = Array.from(document.querySelectorAll(".lesson-frame"), (holder) => ({
    name: holder.dataset.frameName,
    id: holder.id,
    frame: holder.querySelector("iframe"),
  }));
  const originOf = (frame) => new URL(frame.getAttribute("src"), document.baseURI).origin;

  window.addEventListener("message", (event) => {
    const from = frames.find(({ frame }) => frame.contentWindow === event.source);
    if (!from || event.origin !== originOf(from.frame)) {
      return;
    }
    const message = event.data;
    if (!message || message.memplay !== 1 || typeof message.type !== "string") {
      return;
    }
    const { memplay, type, ...rest } = message;
    log.textContent += `${from.name}: ${type} ${JSON.stringify(rest)}\n`;
    log.scrollTop = log.scrollHeight;
  });

  for (const button of document.querySelectorAll("button[data-frame]")) {
    button.addEventListener("click", () => {
      const to = frames.find(({ id }) => id === button.dataset.frame);
      if (!to || !to.frame.contentWindow) {
        return;
      }
      const message = {
        memplay: 1,
        type: "set",
        settings: { [button.dataset.key]: button.dataset.value },
      };
      to.frame.contentWindow.postMessage(message, originOf(to.frame));
    });
  }
})();
