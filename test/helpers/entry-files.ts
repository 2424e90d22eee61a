/** An intelligence entry file (`as: intelligence`) of two question-and-answer records, as YAML. */
export const FAQ_YAML = [
  '- question: When do we deploy?',
  '  answer: On Tuesdays, after the standup.',
  '- question: Who is on call?',
  '  answer: The rotation in PagerDuty.',
].join('\n');
