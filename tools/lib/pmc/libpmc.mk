# SPDX-License-Identifier: GPL-2.0
# What a program needs to build with libpmc from source: include this,
# then compile $(LIBPMC_SRCS) in (as the selftests do) or link
# $(LIBPMC_LIBS) after building them with this directory's Makefile.
LIBPMC_DIR := $(dir $(lastword $(MAKEFILE_LIST)))
LIBPMC_SRCS := $(addprefix $(LIBPMC_DIR),core.c events.c evlist.c maps.c ring.c sample.c self.c strerror.c)
LIBPMC_HDRS := $(LIBPMC_DIR)libpmc.h
LIBPMC_CFLAGS := -I$(LIBPMC_DIR)

# libpfm4 names the CPU's own events, when it is installed (libpfm4-dev);
# LIBPFM=0 builds without it.
LIBPFM ?= $(if $(wildcard /usr/include/perfmon/pfmlib.h),1,0)
ifeq ($(LIBPFM),1)
LIBPMC_CFLAGS += -DHAVE_LIBPFM
LIBPMC_LDLIBS := -lpfm
endif
