/*
 * steps.h - recognising training-step lines and out-of-memory messages in a
 * program's output, so `gpuwhy run` can timestamp steps without any change
 * to the program.
 *
 * Default patterns (case-insensitive), tried in order; the number is the step:
 *   "step 120", "step: 120", "global_step=120", "iter 120", "iteration 120", "it 120"
 *   "[120/5000]"                       (bracketed progress)
 *   "Epoch 3 ... 120/500"              (epoch line with a batch counter)
 *   "| 120/500 ["                      (tqdm bars)
 * A user pattern (--step-regex) replaces them: its first capture group, if
 * any, is the step number; otherwise steps are counted.
 */
#ifndef GPUWHY_RECORD_STEPS_H
#define GPUWHY_RECORD_STEPS_H

#include <stdbool.h>

typedef struct steps_matcher steps_matcher;

/* NULL user_re means the defaults. Returns NULL with a message in err on a bad regex. */
steps_matcher *steps_matcher_new(const char *user_re, char *err, int errlen);
void steps_matcher_free(steps_matcher *m);

/*
 * Does line mark a step? On a match returns true and sets *step to the
 * number printed (or a running count). A line repeating the previous step
 * number (several ranks printing the same step) does not count again.
 */
bool steps_match(steps_matcher *m, const char *line, long *step);

/* True when the line reports a GPU out-of-memory error (PyTorch, TensorFlow, JAX, CUDA). */
bool steps_is_oom(const char *line);

#endif
