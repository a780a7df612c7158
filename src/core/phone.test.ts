import { describe, expect, it } from 'vitest';
import { canonicalPhone, phoneFromWhatsAppId } from './phone.ts';

describe('canonicalPhone', () => {
  it('reads international numbers with separators, and refuses national or invalid ones', () => {
    expect(canonicalPhone(' +1 (416) 555-0123 ')).toBe('+14165550123');
    expect(canonicalPhone('0044 20 7946 0958')).toBe('+442079460958');
    expect(canonicalPhone('4165550123')).toBeNull();
    expect(canonicalPhone('+1 555')).toBeNull();
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
    for (const raw of ['', 'US.13491208655302741918', '+14165550123', '12', '1'.repeat(16), '5219999']) expect(phoneFromWhatsAppId(raw)).toBeNull();
  });
});
