/*
 * sim_i18n.h - the simulated GPU's messages in the language of the program
 * that loaded it. They are marked for gpuwhy's catalogue (text domain
 * "gpuwhy", the same name as src/util/i18n.h's GW_TEXTDOMAIN) and looked up
 * with glibc's dgettext where they are formatted: inside gpuwhy, which binds
 * the domain and chooses the language before anything runs, they come out in
 * the user's language; in any other program that loads the library (nvtop, a
 * training script) the domain is not bound to gpuwhy's catalogues and the
 * English text stays. The simulator includes nothing of src/, so this is
 * its own one line of gettext.
 */
#ifndef GPUWHY_SIM_I18N_H
#define GPUWHY_SIM_I18N_H

#include <libintl.h>

#define SIM_TEXTDOMAIN "gpuwhy"

/* A message (or a format: printf checks still see through dgettext). The
 * xgettext keywords sim_sc_fail:4, sim_sc_fail_key:4 and init_fail:1 cover
 * formats handed to the error functions, which translate them themselves. */
#define SIM_(s) dgettext(SIM_TEXTDOMAIN, s)

#endif
