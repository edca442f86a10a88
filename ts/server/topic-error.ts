/** A topic operation refused, with the Kafka error code to answer it with. */
export class TopicError extends Error {
  constructor(
    readonly errorCode: number,
    message: string,
  ) {
    super(message)
  }
}
