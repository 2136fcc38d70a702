/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 *
 * The whole native test framework: a check macro that reports the failing expression and
 * makes the test function return 1. Tests are plain executables registered with ctest.
 */
#ifndef HPCN_TEST_H
#define HPCN_TEST_H

#include <stdio.h>

#define HPCN_CHECK(cond)                                                                  \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);      \
            return 1;                                                                     \
        }                                                                                 \
    } while (0)

/* Runs one test function, printing its name and outcome; evaluates to 1 on failure. */
#define HPCN_RUN(test)                                                                    \
    (printf("%s: ", #test), fflush(stdout),                                               \
     (test)() == 0 ? (printf("ok\n"), 0) : (printf("FAILED\n"), 1))

#endif /* HPCN_TEST_H */
