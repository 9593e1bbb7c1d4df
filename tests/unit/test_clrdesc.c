/*
 * Tests of clrdesc (agent/clrdesc.h): the runtime's description of its own
 * frames, read as untrusted JSON.
 */
#include <stdlib.h>

#include "agent/clrdesc.h"
#include "test.h"

/* The runtime's contract descriptor, as .NET 10 writes it (abridged). */
static void test_clrdesc_frames(void)
{
    static const char json[] =
        "{\"version\":0,\"baseline\":\"empty\",\"types\":{\"Thread\":{\"Id\":16,"
        "\"OSId\":296,\"Frame\":8,\"GCHandle\":[304,\"GCHandle\"]},\"Frame\":{\"Next\":8},"
        "\"InlinedCallFrame\":{\"!\":56,\"CallSiteSP\":24,\"CallerReturnAddress\":32},"
        "\"FramedMethodFrame\":{\"!\":32,\"TransitionBlockPtr\":16},"
        "\"TransitionBlock\":{\"!\":104,\"ReturnAddress\":96},"
        "\"HijackFrame\":{\"!\":40,\"ReturnAddress\":16,\"HijackArgsPtr\":32}},"
        "\"globals\":{\"GCInfoVersion\":[\"0x4\",\"uint32\"],"
        "\"InlinedCallFrameIdentifier\":[\"0x1\",\"nuint\"],"
        "\"HijackFrameIdentifier\":[\"0x8\",\"nuint\"],"
        "\"PrestubMethodFrameIdentifier\":[\"0x9\",\"nuint\"],"
        "\"AppDomain\":[[1],\"pointer\"],\"Architecture\":[\"x64\",\"string\"]},"
        "\"contracts\":{\"Thread\":1}}";
    struct clrdesc_frames f;
    REQUIRE(clrdesc_parse_frames(json, sizeof json - 1, &f) == 0);
    CHECK(f.usable);
    CHECK_EQ(f.thread_frame, 8);
    CHECK_EQ(f.thread_os_id, 296);
    CHECK_EQ(f.fmf_transition, 16);
    CHECK_EQ(f.fmf_method, 24);
    CHECK_EQ(f.tb_return, 96);
    REQUIRE(f.id_count == 3);
    CHECK_EQ(f.ids[0].id, 9);
    CHECK_EQ(f.ids[0].kind, CLR_FRAME_PRESTUB);
    CHECK(f.ids[0].transition);
    CHECK_EQ(f.ids[1].id, 8);
    CHECK_EQ(f.ids[1].kind, CLR_FRAME_SUSPENDED);
    CHECK_EQ(f.ids[1].ret, 16);
    CHECK_EQ(f.ids[2].id, 1);
    CHECK_EQ(f.ids[2].kind, CLR_FRAME_PINVOKE);
    CHECK_EQ(f.ids[2].ret, 32);
    /* anything missing or malformed: unusable, never a guess */
    char broken[sizeof json];
    memcpy(broken, json, sizeof json);
    *strstr(broken, "\"Frame\":8") = 'X';
    CHECK(clrdesc_parse_frames(broken, sizeof json - 1, &f) < 0 && !f.usable);
    /* cut short (read under ASan: never past the end): what is read whole
     * is right, and without the frame types nothing is usable */
    for (size_t cut = 0; cut < sizeof json - 1; cut++) {
        char *copy = malloc(cut ? cut : 1);
        REQUIRE(copy);
        memcpy(copy, json, cut);
        if (clrdesc_parse_frames(copy, cut, &f) == 0) {
            CHECK(cut > (size_t)(strstr(json, "globals") - json));
            CHECK_EQ(f.tb_return, 96);
            for (uint32_t i = 0; i < f.id_count; i++)
                CHECK(f.ids[i].id == 9 || f.ids[i].id == 8 || f.ids[i].id == 1);
        }
        free(copy);
    }
    CHECK(clrdesc_parse_frames("{\"types\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}",
                               85, &f) < 0);
}

void suite_clrdesc(void)
{
    RUN(test_clrdesc_frames);
}
