# sd_libs.m4 - checks for the libraries shakedown links against.
# Required ones stop configure naming the Debian package to install;
# optional ones disable their feature and say why in the summary.

AC_DEFUN([AX_PTHREAD_SIMPLE], [
  AC_SEARCH_LIBS([pthread_create], [pthread], [],
    [AC_MSG_ERROR([POSIX threads not found; install libc6-dev])])
])

AC_DEFUN([SD_CHECK_SQLITE], [
  PKG_CHECK_MODULES([SQLITE], [sqlite3 >= 3.37],
    [sd_sqlite_summary="yes (sqlite3 `$PKG_CONFIG --modversion sqlite3`)"],
    [AC_MSG_ERROR([SQLite 3.37 or newer not found; install it with: apt-get install libsqlite3-dev])])
])

AC_DEFUN([SD_CHECK_YAML], [
  PKG_CHECK_MODULES([YAML], [yaml-0.1],
    [sd_yaml_summary="yes (libyaml `$PKG_CONFIG --modversion yaml-0.1`)"],
    [AC_MSG_ERROR([libyaml not found; install it with: apt-get install libyaml-dev])])
])

AC_DEFUN([SD_CHECK_JANSSON], [
  PKG_CHECK_MODULES([JANSSON], [jansson >= 2.10],
    [sd_jansson_summary="yes (jansson `$PKG_CONFIG --modversion jansson`)"],
    [AC_MSG_ERROR([Jansson 2.10 or newer not found; install it with: apt-get install libjansson-dev])])
])

AC_DEFUN([SD_CHECK_CURL], [
  AC_ARG_WITH([curl], [AS_HELP_STRING([--without-curl], [build without report upload])],
    [], [with_curl=check])
  sd_have_curl=no
  AS_IF([test "x$with_curl" != xno], [
    PKG_CHECK_MODULES([CURL], [libcurl], [sd_have_curl=yes],
      [sd_curl_summary="no (libcurl not found: apt-get install libcurl4-openssl-dev)"])
  ], [sd_curl_summary="no (--without-curl)"])
  AS_IF([test "x$sd_have_curl" = xyes], [
    AC_DEFINE([HAVE_CURL], [1], [report upload with libcurl])
    sd_curl_summary="yes (libcurl `$PKG_CONFIG --modversion libcurl`)"])
  AM_CONDITIONAL([HAVE_CURL], [test "x$sd_have_curl" = xyes])
])

AC_DEFUN([SD_CHECK_PMI2], [
  AC_ARG_WITH([pmi2], [AS_HELP_STRING([--without-pmi2], [build without the Slurm PMI2 bootstrap])],
    [], [with_pmi2=check])
  sd_have_pmi2=no
  AS_IF([test "x$with_pmi2" != xno], [
    AC_CHECK_HEADER([slurm/pmi2.h], [
      AC_CHECK_LIB([pmi2], [PMI2_Init], [sd_have_pmi2=yes; PMI2_LIBS="-lpmi2"])])
    AS_IF([test "x$sd_have_pmi2" != xyes],
      [sd_pmi2_summary="no (libpmi2 not found: apt-get install libpmi2-0-dev)"])
  ], [sd_pmi2_summary="no (--without-pmi2)"])
  AS_IF([test "x$sd_have_pmi2" = xyes], [
    AC_DEFINE([HAVE_PMI2], [1], [Slurm PMI2 bootstrap])
    sd_pmi2_summary="yes (-lpmi2)"])
  AC_SUBST([PMI2_LIBS])
  AM_CONDITIONAL([HAVE_PMI2], [test "x$sd_have_pmi2" = xyes])
])

AC_DEFUN([SD_CHECK_SLURM], [
  sd_have_slurm=no
  AC_CHECK_HEADER([slurm/slurm.h], [
    AC_CHECK_LIB([slurm], [slurm_hostlist_create], [sd_have_slurm=yes; SLURM_LIBS="-lslurm"])])
  AS_IF([test "x$sd_have_slurm" = xyes], [
    AC_DEFINE([HAVE_SLURM], [1], [libslurm hostlist functions])
    sd_slurm_summary="yes (libslurm)"],
    [sd_slurm_summary="no (built-in hostlist compression; apt-get install libslurm-dev for libslurm's)"])
  AC_SUBST([SLURM_LIBS])
  AM_CONDITIONAL([HAVE_SLURM], [test "x$sd_have_slurm" = xyes])
])

AC_DEFUN([SD_CHECK_GLOO], [
  AC_ARG_WITH([gloo], [AS_HELP_STRING([--without-gloo], [build without the Gloo (CPU, TCP) backend])],
    [], [with_gloo=check])
  sd_have_gloo=no
  AS_IF([test "x$with_gloo" != xno], [
    AC_LANG_PUSH([C++])
    sd_save_CXXFLAGS=$CXXFLAGS; CXXFLAGS="$CXXFLAGS -std=c++17"
    sd_save_LIBS=$LIBS; LIBS="$LIBS -lgloo"
    AC_MSG_CHECKING([for Gloo (libgloo-dev)])
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <gloo/transport/tcp/device.h>]],
      [[gloo::transport::tcp::attr a; a.hostname = "127.0.0.1";
        auto d = gloo::transport::tcp::CreateDevice(a); (void)d;]])],
      [sd_have_gloo=yes], [])
    AC_MSG_RESULT([$sd_have_gloo])
    CXXFLAGS=$sd_save_CXXFLAGS; LIBS=$sd_save_LIBS
    AC_LANG_POP([C++])
    AS_IF([test "x$sd_have_gloo" != xyes],
      [sd_gloo_summary="no (Gloo not found: apt-get install libgloo-dev)"])
  ], [sd_gloo_summary="no (--without-gloo)"])
  AS_IF([test "x$sd_have_gloo" = xyes], [
    GLOO_LIBS="-lgloo"
    sd_gloo_summary="yes (plugins/gloo, -lgloo)"])
  AC_SUBST([GLOO_LIBS])
  AM_CONDITIONAL([HAVE_GLOO], [test "x$sd_have_gloo" = xyes])
])
