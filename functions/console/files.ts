/** A file of the built web console (bin/build-console.ts): its media type, its text and its ETag. */
export interface ConsoleFile {
  readonly contentType: string;
  readonly body: string;
  readonly etag: string;
}
