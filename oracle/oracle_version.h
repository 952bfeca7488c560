/*
** oracle_version.h: the frozen oracle's version.  Bump it, together with a
** reason in corpus/CHANGES, whenever an oracle output may change bits; the
** numerics have their own NX_NUMERICS_VERSION in numerics/nx_base.h.
*/
#ifndef ORACLE_VERSION_H
#define ORACLE_VERSION_H

#define ORACLE_VERSION 1

#endif
