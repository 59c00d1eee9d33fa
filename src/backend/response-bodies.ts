// Fetch Responses that remember the text they were built from, so the loopback bridge can write those exact bytes
// without reading the body back through a web stream (one stream read per reply saved on the backend's hot path).

/** Body texts of the Responses made by {@link textResponse}; entries die with their Response. */
const bodyTexts = new WeakMap<Response, string>();

/** A Response with a text body (UTF-8 on the wire) whose text {@link knownBodyText} can hand back. */
export function textResponse(text: string, init: ResponseInit): Response {
  const response = new Response(text, init);
  bodyTexts.set(response, text);
  return response;
}

/** The body text of a Response made by {@link textResponse}; undefined for any other Response. */
export function knownBodyText(response: Response): string | undefined {
  return bodyTexts.get(response);
}
