// libsystemd: sd_notify (non-variadic) and sd_journal_sendv (the non-variadic journal call).
#ifndef PINKEEPER_CSYSTEMD_SHIM_H
#define PINKEEPER_CSYSTEMD_SHIM_H
#include <sys/uio.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#endif
