/**
 * What a person sees while a tool runs: a human phrase per tool, never its name (the name stays in
 * the event's `data` for a UI to use). A tool not in the table (an MCP server's) reads as work in
 * progress.
 */
const STARTED: Record<string, string> = {
  verify_account: 'Checking your account details…',
  lookup_account: 'Looking up your account…',
  list_appointments: 'Looking up your appointments…',
  get_available_slots: 'Finding open times…',
  cancel_appointment: 'Cancelling the appointment…',
  reschedule_appointment: 'Moving the appointment…',
  create_appointment: 'Booking the appointment…',
  open_invoices: 'Looking up your bills…',
  escalate: 'Opening a support ticket…',
  service_policy: 'Checking our policy…',
  calculator: 'Calculating…',
  current_time: 'Checking the time…',
  add_note: 'Saving a note…',
  list_notes: 'Reading your notes…',
  delete_note: 'Deleting a note…',
  recall_conversation: 'Remembering what we talked about…',
  save_user_profile: 'Noting that down…',
  scheduler: 'Setting up your daily prompts…',
  generate_habit_prompt: 'Writing your prompt…',
  transition_state: 'One moment…',
};

export function toolStartedPhrase(tool: string): string {
  return STARTED[tool] ?? 'Working on it…';
}

export function toolFinishedPhrase(ok: boolean): string {
  return ok ? 'Done.' : 'That step did not work.';
}
