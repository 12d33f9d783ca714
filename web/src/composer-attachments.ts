/**
 * Files for the next message: images and files pasted into the message box or dropped on it,
 * shown as a list of chips (each removable) above the box, and sent with the message as the
 * HTTP API's JSON attachments (`{name, mediaType, data}`, base64). A file over the gateway's
 * default cap is refused here with a line, before it is read.
 */
import "./composer-attachments.css";

/** The gateway's default attachment cap (RUDDER_ATTACHMENT_MAX_MB); it checks again. */
const MAX_BYTES = 20 * 1024 * 1024;
const MAX_FILES = 10;

export interface OutgoingAttachment {
  name: string;
  mediaType: string;
  data: string;
}

function base64Of(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => {
      const url = String(reader.result);
      resolve(url.slice(url.indexOf(",") + 1));
    };
    reader.onerror = () => reject(reader.error ?? new Error("could not read the file"));
    reader.readAsDataURL(file);
  });
}

export class ComposerAttachments {
  readonly #files: File[] = [];
  readonly #list: HTMLUListElement;
  readonly #say: (line: string) => void;

  /** `form` is the composer (drops land on it), `input` its text box (pastes land there). */
  constructor(form: HTMLFormElement, input: HTMLTextAreaElement, say: (line: string) => void) {
    this.#say = say;
    this.#list = document.createElement("ul");
    this.#list.className = "composer-attachments";
    this.#list.dataset.testid = "composer-attachments";
    this.#list.setAttribute("aria-label", "Files to send");
    this.#list.hidden = true;
    form.prepend(this.#list);
    input.addEventListener("paste", (event) => {
      const files = [...(event.clipboardData?.files ?? [])];
      if (files.length === 0) return;
      event.preventDefault();
      this.add(files);
    });
    form.addEventListener("dragover", (event) => {
      if (event.dataTransfer?.types.includes("Files")) event.preventDefault();
    });
    form.addEventListener("drop", (event) => {
      const files = [...(event.dataTransfer?.files ?? [])];
      if (files.length === 0) return;
      event.preventDefault();
      this.add(files);
    });
  }

  get count(): number {
    return this.#files.length;
  }

  add(files: File[]): void {
    for (const file of files) {
      if (this.#files.length >= MAX_FILES) {
        this.#say(`At most ${MAX_FILES} files go with one message.`);
        break;
      }
      if (file.size > MAX_BYTES) {
        this.#say(`${file.name || "The file"} is over 20 MB; it was not added.`);
        continue;
      }
      this.#files.push(file);
    }
    this.#render();
  }

  /** The files as the API takes them; the list is emptied (`restore` puts them back). */
  async take(): Promise<{ files: File[]; attachments: OutgoingAttachment[] }> {
    const files = this.#files.splice(0);
    this.#render();
    const attachments = await Promise.all(
      files.map(async (file, index) => ({
        name:
          file.name ||
          `pasted-${index + 1}.${(file.type.split("/")[1] ?? "bin").replace(/\W/g, "")}`,
        mediaType: file.type || "application/octet-stream",
        data: await base64Of(file),
      })),
    );
    return { files, attachments };
  }

  /** A message that was not sent keeps its files. */
  restore(files: File[]): void {
    this.#files.unshift(...files);
    this.#render();
  }

  #render(): void {
    this.#list.replaceChildren(
      ...this.#files.map((file, index) => {
        const item = document.createElement("li");
        item.dataset.testid = "composer-attachment";
        const name = document.createElement("span");
        name.textContent = file.name || file.type || "file";
        const remove = document.createElement("button");
        remove.type = "button";
        remove.textContent = "\u00d7";
        remove.setAttribute("aria-label", `Remove ${name.textContent}`);
        remove.addEventListener("click", () => {
          this.#files.splice(index, 1);
          this.#render();
        });
        item.append(name, remove);
        return item;
      }),
    );
    this.#list.hidden = this.#files.length === 0;
  }
}
