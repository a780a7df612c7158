/**
 * Role markers at the start of the assistant's system messages, read by the offline demo model;
 * harmless to a real model.
 */
export const ASSISTANT_MARKERS = {
  route: '[assistant:route]',
  recall: '[assistant:recall]',
  reply: '[assistant:reply]',
} as const;
