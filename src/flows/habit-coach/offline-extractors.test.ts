import { describe, expect, it } from 'vitest';
import { findAnchor, findClockTime, findDomain, impliedClockTime, requestedTime } from './offline-extractors.ts';

describe('offline model recognisers', () => {
  it.each([
    ['7am', '07:00'],
    ['at 7:30 pm', '19:30'],
    ['around 19:00', '19:00'],
    ['12am', '00:00'],
    ['at 8', '08:00'],
    ['I have 2 kids', null],
  ])('finds the clock time in %j', (text, expected) => expect(findClockTime(text)).toBe(expected));
  it.each([
    ['after dinner', '19:00'],
    ['in the morning', '08:00'],
    ['7am', '07:00'],
    ['whenever', null],
  ])('implies a time from %j', (text, expected) => expect(impliedClockTime(text)).toBe(expected));
  it.each([
    ['6pm', '18:00'],
    ['at 7', '07:00'],
    ['can we move it to after dinner?', '19:00'],
    ['please change it from 7am to 8:30am', '08:30'],
    ["no, I'd rather have it at 6pm", '18:00'],
    ['I did it at 7am today', null],
    ['missed it, I was busy at 6pm', null],
    ['I have 2 kids', null],
    ['can you tell me more?', null],
  ])('reads a request for a new time in %j', (text, expected) => expect(requestedTime(text)).toBe(expected));
  it.each([
    ['I want to walk more', 'walking'],
    ['drink more water', 'hydration'],
    ['something', null],
  ])('finds the domain in %j', (text, expected) => expect(findDomain(text)).toBe(expected));
  it.each([
    ['right after breakfast, usually', 'after breakfast'],
    ['before bed', 'before bed'],
    ['mornings', null],
  ])('finds the anchor in %j', (text, expected) => expect(findAnchor(text)).toBe(expected));
});
