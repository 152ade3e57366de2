/**
 * The A2A 1.0 messages the service sends about a return request - to a brand's agent (the request,
 * a follow-up, a cancellation) and to the requester's agent (a notification): role `user` (the
 * service is the client), one text part a person or a model reads first, one data part holding the
 * same event as JSON, exactly as the webhook carries it. `messageId` is the event's id, the same on
 * every retry, so an agent that keeps ids acts once; `contextId` is the request id, so every message
 * about one request lands in one conversation.
 */
import { type Message, Role } from '@a2a-js/sdk';

export const JSON_MEDIA_TYPE = 'application/json';

export function requestMessage(event: {
  messageId: string;
  requestId: string;
  /** The task the receiving agent opened for the request, when it opened one. */
  taskId?: string;
  text: string;
  data: unknown;
}): Message {
  return {
    messageId: event.messageId,
    contextId: event.requestId,
    taskId: event.taskId ?? '',
    role: Role.ROLE_USER,
    parts: [
      {
        content: { $case: 'text', value: event.text },
        metadata: undefined,
        filename: '',
        mediaType: 'text/plain',
      },
      {
        content: { $case: 'data', value: event.data },
        metadata: undefined,
        filename: '',
        mediaType: JSON_MEDIA_TYPE,
      },
    ],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}
