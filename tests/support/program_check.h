// Test programs exit 1 with a message on any unexpected CUDA result.
#pragma once

#include <cstdio>
#include <cstdlib>

#define CHECK_EQ(call, expected)                                                                   \
  do {                                                                                             \
    long long check_rc_ = static_cast<long long>(call);                                            \
    if (check_rc_ != static_cast<long long>(expected)) {                                           \
      std::fprintf(stderr, "%s:%d: %s returned %lld, expected %lld\n", __FILE__, __LINE__, #call, \
                   check_rc_, static_cast<long long>(expected));                                   \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)
#define CHECK_OK(call) CHECK_EQ(call, 0)
