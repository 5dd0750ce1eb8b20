// What a dialect says about a WebSocket mode of one of its routes (OpenAI's Responses over WebSocket): how a frame
// asks for a response, how a continuation's input is put together, and the frames the gateway writes itself. The
// socket, its bounds and the call behind each response are the gateway's (src/websocket/).

/** Facts of an error, as an error frame tells them. */
export interface SocketErrorFacts {
  status: number
  code: string
  message: string
  param: string | undefined
}

/** One frame that asks for a response, as read. */
export interface SocketCreate {
  /** The create body as the HTTP route takes it, without the frame's own fields and without the continuation. */
  request: Record<string, unknown>
  /** The input items this frame sends (a string input as its one message). */
  input: unknown[]
  /** The response this one continues, if any. */
  previousId: string | undefined
  /** A warm-up: answered by the gateway, nothing goes upstream. */
  warmUp: boolean
}

/** A route's WebSocket mode, served on the route's path with `Upgrade: websocket`. */
export interface WebSocketFormat {
  /** Reads one text frame; throws a GatewayError (answered as an error frame) for one that asks for nothing valid. */
  read(frame: unknown): SocketCreate
  /** The body of a create whose input is `input` (the items carried from the response it continues, then its own). */
  withInput(request: Record<string, unknown>, input: unknown[]): Record<string, unknown>
  /** The events that answer a warm-up, with the response's `id`. */
  warmUpEvents(id: string, request: Record<string, unknown>, createdAt: number): Record<string, unknown>[]
  /**
   * One event's data as the socket sends it: the response a background call shows (`background`, `store`) as the
   * frame asked for it. Called for every event: returns `data` itself when there is nothing to show otherwise.
   */
  frameOf(data: string, create: SocketCreate): string
  /** A response's object as the socket shows it (what `frameOf` writes in the events that carry it). */
  shown(object: Record<string, unknown>, create: SocketCreate): Record<string, unknown>
  /** The output items of a response's final object, which a continuation carries after its input. */
  outputOf(object: Record<string, unknown>): unknown[]
  /** An error frame. */
  errorFrame(facts: SocketErrorFacts): Record<string, unknown>
}
