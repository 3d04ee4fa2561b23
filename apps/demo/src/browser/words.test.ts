import { describe, expect, it } from '@jest/globals';
import { clock, explainName, summarizeComings } from './words';

describe('clock', () => {
  const now = new Date(2025, 2, 3, 18, 30).getTime();

  it('gives hours and minutes for a time of the same day', () => {
    expect(clock(new Date(2025, 2, 3, 9, 5, 59).getTime(), now)).toBe('09:05');
    expect(clock(new Date(2025, 2, 3, 0, 0).getTime(), now)).toBe('00:00');
  });

  it('adds the day and month for a time of another day', () => {
    expect(clock(new Date(2025, 2, 2, 23, 59).getTime(), now)).toBe('2 Mar 23:59');
    expect(clock(new Date(2024, 2, 3, 14, 5).getTime(), now)).toBe('3 Mar 14:05');
  });
});

describe('summarizeComings', () => {
  it('names each person once, by what they did first and last', () => {
    expect(
      summarizeComings([
        { kind: 'joined', name: 'guest-Ada' },
        { kind: 'joined', name: 'guest-Cy' },
        { kind: 'joined', name: 'Bob' },
        { kind: 'left', name: 'guest-Cy' },
        { kind: 'left', name: 'Dee' },
        { kind: 'left', name: 'Eve' },
        { kind: 'joined', name: 'Eve' },
      ]),
    ).toBe('guest-Ada and Bob joined; guest-Cy joined and left; Dee left; Eve left and came back.');
  });

  it('counts a join, leave and join again as joined', () => {
    expect(
      summarizeComings([
        { kind: 'joined', name: 'Ann' },
        { kind: 'left', name: 'Ann' },
        { kind: 'joined', name: 'Ann' },
      ]),
    ).toBe('Ann joined.');
  });

  it('lists three names with commas, and nothing for an empty run', () => {
    expect(summarizeComings(['A', 'B', 'C'].map((name) => ({ kind: 'left' as const, name })))).toBe(
      'A, B and C left.',
    );
    expect(summarizeComings([])).toBe('');
  });
});

describe('explainName', () => {
  it("says the token's account name replaces a typed one", () => {
    const text = explainName('Alice', 'Zed', { name: 'Alice' });
    expect(text).toMatch(/^You chat as Alice: the token signs you in as Alice/);
    expect(text).toContain('the name you typed ("Zed") is not used');
  });

  it('says nothing was replaced when the typed name is the account name, or none was typed', () => {
    for (const typed of ['Alice', '']) {
      expect(explainName('Alice', typed, { name: 'Alice' })).toBe(
        'You chat as Alice: the name of the account the token signs you in as.',
      );
    }
  });

  it('explains the guest- mark, and a name the server chose', () => {
    expect(explainName('guest-Grace', 'Grace', null)).toMatch(
      /^You chat as guest-Grace: without a token you are a guest, .*starts with "guest-"/,
    );
    expect(explainName('guest-1a2b3c', '', null)).toContain('the server chose one');
  });
});
