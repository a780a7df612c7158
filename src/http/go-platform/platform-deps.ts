import type { Clock, IdGenerator } from '../../core/clock.ts';
import type { Conversation, Participant } from '../../core/domain.ts';
import type { PhoneRegion } from '../../core/phone.ts';
import type { Engine } from '../../engine/engine.ts';
import type { Outgoing } from '../../engine/outgoing.ts';
import type { ParticipantService } from '../../engine/participant-service.ts';
import type { LlmProvider } from '../../llm/llm-provider.ts';
import type { Store } from '../../store/store.ts';
import type { CustomGenerator } from './custom-generator.ts';
import type { GoSchedule } from './go-schemas.ts';

export interface GoPlatformDeps {
  store: Store;
  engine: Pick<Engine, 'exclusive'>;
  participants: Pick<ParticipantService, 'findFlowOf'>;
  outgoing: Outgoing;
  ids: IdGenerator;
  clock: Clock;
  provider: LlmProvider;
  /** False while the offline demo model answers: genai prompts are refused rather than sent its canned text. */
  realModel: boolean;
  phoneRegion?: PhoneRegion | undefined;
  /** `PLATFORM_DEFAULT_SCHEDULE` (Go's `DEFAULT_SCHEDULE`): a `POST /schedule` without a schedule gets it. */
  defaultSchedule?: GoSchedule | undefined;
  /** `PLATFORM_CUSTOM_GENERATOR`'s module: writes `type: "custom"` prompts; undefined = they are refused. */
  customGenerator?: CustomGenerator | undefined;
}

/** A recipient: an enrolled participant (E.164 or Go's digits-only form) and their conversation. */
export interface Recipient {
  participant: Participant;
  conversation: Conversation;
}

/** The OpenAPI tag of every Go platform route. */
export const tags = ['go-platform'];
