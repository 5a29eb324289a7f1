# SPDX-License-Identifier: Apache-2.0
# Warning flags and sanitizers applied to every FlagPrism target.
set(FP_WARNING_FLAGS
  -Wall -Wextra -Wstrict-prototypes -Wmissing-prototypes -Wshadow -Wformat=2 -Wvla
  -Wno-unused-parameter -Wpointer-arith -Wundef)

if(FP_ASAN)
  add_compile_options(-fsanitize=address -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address)
endif()
if(FP_UBSAN)
  add_compile_options(-fsanitize=undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=undefined)
endif()

function(fp_target_warnings target)
  target_compile_options(${target} PRIVATE ${FP_WARNING_FLAGS})
  if(FP_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
