import { describe, expect, it } from 'vitest';
import { canonicalPhone, phoneExtension, phoneFromWhatsAppId, phoneRegion } from './phone.ts';

describe('canonicalPhone', () => {
  it('reads international numbers with separators, and refuses invalid ones', () => {
    expect(canonicalPhone(' +1 (416) 555-0123 ')).toBe('+14165550123');
    expect(canonicalPhone('0044 20 7946 0958')).toBe('+442079460958');
    expect(canonicalPhone('+1 555')).toBeNull();
    expect(canonicalPhone('call me')).toBeNull();
  });

  it('refuses a number with an extension, which no message can reach, and says what the extension is', () => {
    for (const written of ['+1 416 555 0123 ext. 5', '+14165550123x5', '+1 416 555 0123;ext=5']) {
      expect(canonicalPhone(written), written).toBeNull();
      expect(phoneExtension(written), written).toBe('5');
    }
    expect(phoneExtension('+1 416 555 0123')).toBeUndefined();
  });

  it('reads digits that are a valid number with a + in front (the Go server stores numbers so)', () => {
    expect(canonicalPhone('14165550151')).toBe('+14165550151');
    expect(canonicalPhone('447911123456')).toBe('+447911123456');
    expect(canonicalPhone('14165550151', 'GB')).toBe('+14165550151');
  });

  it('reads national formats in the configured region first, and refuses them without one', () => {
    for (const typed of [
      '415-555-0100',
      '(415) 555-0100',
      '415 555 0100',
      '4155550100',
      '415.555.0100',
      '1 415 555 0100',
    ]) {
      expect(canonicalPhone(typed, 'US'), typed).toBe('+14155550100');
    }
    expect(canonicalPhone('020 7946 0958', 'GB')).toBe('+442079460958');
    expect(canonicalPhone('(415) 555-0100')).toBeNull();
    expect(canonicalPhone('020 7946 0958')).toBeNull();
    expect(canonicalPhone('12345', 'US')).toBeNull();
  });
});

describe('phoneRegion', () => {
  it('accepts ISO region codes libphonenumber knows, in any case', () => {
    expect(phoneRegion('us')).toBe('US');
    expect(phoneRegion('GB')).toBe('GB');
    expect(phoneRegion('XX')).toBeNull();
    expect(phoneRegion('USA')).toBeNull();
  });
});

describe('phoneFromWhatsAppId', () => {
  it('maps a wa_id to E.164, including the legacy Mexican and Brazilian mobile forms', () => {
    expect(phoneFromWhatsAppId('14165550123')).toBe('+14165550123');
    expect(phoneFromWhatsAppId('5215512345678')).toBe('+525512345678'); // old "1" after 52
    expect(phoneFromWhatsAppId('551187654321')).toBe('+5511987654321'); // no ninth digit
    expect(phoneFromWhatsAppId('5511987654321')).toBe('+5511987654321');
    expect(phoneFromWhatsAppId('551133334444')).toBe('+551133334444'); // a Brazilian landline stays as is
  });

  it('gives null for what is not a number', () => {
    for (const raw of ['', 'US.13491208655302741918', '+14165550123', '12', '1'.repeat(16), '5219999'])
      expect(phoneFromWhatsAppId(raw)).toBeNull();
  });
});
