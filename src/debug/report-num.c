/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fast, exact decimal formatting of doubles for the Debugger's reports (see report-internal.h for why).
 *
 * Method: a normal double v = m * 2^e2 (m < 2^53) is scaled by 10^s, taken from a table of
 * 64-bit significands rounded to nearest, into the 128-bit fixed-point product x = m * f, so
 * that v * 10^s = x * 2^-sh has P digits before the binary point. The table's rounding makes x
 * wrong by at most m/2 units, so every decision (round the P-th digit up or down; is a
 * candidate inside v's rounding interval, i.e. would strtod() give v back) is taken only when
 * it holds with that margin; otherwise the caller's slow path (libc) decides. In practice about
 * one number in a hundred takes the slow path. Subnormals, zero and the integral values that
 * the JSON writer already formats quickly always take it.
 *
 * The table was generated with exact rational arithmetic (Python fractions): for each s,
 * f = round(10^s / 2^e) with e chosen so that 2^63 <= f < 2^64.
 */
#include "fp-setup.h"

#include <math.h>

#include <flagprism/json.h>

#include "debug/report-internal.h"

struct pow10 {
	uint64_t f;
	int e;
};

/* 10^s ~= f * 2^e for s = -310..330, f rounded to nearest (2^63 <= f < 2^64) */
#define POW10_MIN (-310)
#define POW10_MAX 330
/* clang-format off */
static const struct pow10 pow10_tab[641] = {
	{0x93445b8731587ea3u, -1093}, {0xb8157268fdae9e4cu, -1090},
	{0xe61acf033d1a45dfu, -1087}, {0x8fd0c16206306bacu, -1083},
	{0xb3c4f1ba87bc8697u, -1080}, {0xe0b62e2929aba83cu, -1077},
	{0x8c71dcd9ba0b4926u, -1073}, {0xaf8e5410288e1b6fu, -1070},
	{0xdb71e91432b1a24bu, -1067}, {0x892731ac9faf056fu, -1063},
	{0xab70fe17c79ac6cau, -1060}, {0xd64d3d9db981787du, -1057},
	{0x85f0468293f0eb4eu, -1053}, {0xa76c582338ed2622u, -1050},
	{0xd1476e2c07286faau, -1047}, {0x82cca4db847945cau, -1043},
	{0xa37fce126597973du, -1040}, {0xcc5fc196fefd7d0cu, -1037},
	{0xff77b1fcbebcdc4fu, -1034}, {0x9faacf3df73609b1u, -1030},
	{0xc795830d75038c1eu, -1027}, {0xf97ae3d0d2446f25u, -1024},
	{0x9becce62836ac577u, -1020}, {0xc2e801fb244576d5u, -1017},
	{0xf3a20279ed56d48au, -1014}, {0x9845418c345644d7u, -1010},
	{0xbe5691ef416bd60cu, -1007}, {0xedec366b11c6cb8fu, -1004},
	{0x94b3a202eb1c3f39u, -1000}, {0xb9e08a83a5e34f08u, -997},
	{0xe858ad248f5c22cau, -994}, {0x91376c36d99995beu, -990},
	{0xb58547448ffffb2eu, -987}, {0xe2e69915b3fff9f9u, -984},
	{0x8dd01fad907ffc3cu, -980}, {0xb1442798f49ffb4bu, -977},
	{0xdd95317f31c7fa1du, -974}, {0x8a7d3eef7f1cfc52u, -970},
	{0xad1c8eab5ee43b67u, -967}, {0xd863b256369d4a41u, -964},
	{0x873e4f75e2224e68u, -960}, {0xa90de3535aaae202u, -957},
	{0xd3515c2831559a83u, -954}, {0x8412d9991ed58092u, -950},
	{0xa5178fff668ae0b6u, -947}, {0xce5d73ff402d98e4u, -944},
	{0x80fa687f881c7f8eu, -940}, {0xa139029f6a239f72u, -937},
	{0xc987434744ac874fu, -934}, {0xfbe9141915d7a922u, -931},
	{0x9d71ac8fada6c9b5u, -927}, {0xc4ce17b399107c23u, -924},
	{0xf6019da07f549b2bu, -921}, {0x99c102844f94e0fbu, -917},
	{0xc0314325637a193au, -914}, {0xf03d93eebc589f88u, -911},
	{0x96267c7535b763b5u, -907}, {0xbbb01b9283253ca3u, -904},
	{0xea9c227723ee8bcbu, -901}, {0x92a1958a7675175fu, -897},
	{0xb749faed14125d37u, -894}, {0xe51c79a85916f485u, -891},
	{0x8f31cc0937ae58d3u, -887}, {0xb2fe3f0b8599ef08u, -884},
	{0xdfbdcece67006ac9u, -881}, {0x8bd6a141006042beu, -877},
	{0xaecc49914078536du, -874}, {0xda7f5bf590966849u, -871},
	{0x888f99797a5e012du, -867}, {0xaab37fd7d8f58179u, -864},
	{0xd5605fcdcf32e1d7u, -861}, {0x855c3be0a17fcd26u, -857},
	{0xa6b34ad8c9dfc070u, -854}, {0xd0601d8efc57b08cu, -851},
	{0x823c12795db6ce57u, -847}, {0xa2cb1717b52481edu, -844},
	{0xcb7ddcdda26da269u, -841}, {0xfe5d54150b090b03u, -838},
	{0x9efa548d26e5a6e2u, -834}, {0xc6b8e9b0709f109au, -831},
	{0xf867241c8cc6d4c1u, -828}, {0x9b407691d7fc44f8u, -824},
	{0xc21094364dfb5637u, -821}, {0xf294b943e17a2bc4u, -818},
	{0x979cf3ca6cec5b5bu, -814}, {0xbd8430bd08277231u, -811},
	{0xece53cec4a314ebeu, -808}, {0x940f4613ae5ed137u, -804},
	{0xb913179899f68584u, -801}, {0xe757dd7ec07426e5u, -798},
	{0x9096ea6f3848984fu, -794}, {0xb4bca50b065abe63u, -791},
	{0xe1ebce4dc7f16dfcu, -788}, {0x8d3360f09cf6e4bdu, -784},
	{0xb080392cc4349dedu, -781}, {0xdca04777f541c568u, -778},
	{0x89e42caaf9491b61u, -774}, {0xac5d37d5b79b6239u, -771},
	{0xd77485cb25823ac7u, -768}, {0x86a8d39ef77164bdu, -764},
	{0xa8530886b54dbdecu, -761}, {0xd267caa862a12d67u, -758},
	{0x8380dea93da4bc60u, -754}, {0xa46116538d0deb78u, -751},
	{0xcd795be870516656u, -748}, {0x806bd9714632dff6u, -744},
	{0xa086cfcd97bf97f4u, -741}, {0xc8a883c0fdaf7df0u, -738},
	{0xfad2a4b13d1b5d6cu, -735}, {0x9cc3a6eec6311a64u, -731},
	{0xc3f490aa77bd60fdu, -728}, {0xf4f1b4d515acb93cu, -725},
	{0x991711052d8bf3c5u, -721}, {0xbf5cd54678eef0b7u, -718},
	{0xef340a98172aace5u, -715}, {0x9580869f0e7aac0fu, -711},
	{0xbae0a846d2195713u, -708}, {0xe998d258869facd7u, -705},
	{0x91ff83775423cc06u, -701}, {0xb67f6455292cbf08u, -698},
	{0xe41f3d6a7377eecau, -695}, {0x8e938662882af53eu, -691},
	{0xb23867fb2a35b28eu, -688}, {0xdec681f9f4c31f31u, -685},
	{0x8b3c113c38f9f37fu, -681}, {0xae0b158b4738705fu, -678},
	{0xd98ddaee19068c76u, -675}, {0x87f8a8d4cfa417cau, -671},
	{0xa9f6d30a038d1dbcu, -668}, {0xd47487cc8470652bu, -665},
	{0x84c8d4dfd2c63f3bu, -661}, {0xa5fb0a17c777cf0au, -658},
	{0xcf79cc9db955c2ccu, -655}, {0x81ac1fe293d599c0u, -651},
	{0xa21727db38cb0030u, -648}, {0xca9cf1d206fdc03cu, -645},
	{0xfd442e4688bd304bu, -642}, {0x9e4a9cec15763e2fu, -638},
	{0xc5dd44271ad3cdbau, -635}, {0xf7549530e188c129u, -632},
	{0x9a94dd3e8cf578bau, -628}, {0xc13a148e3032d6e8u, -625},
	{0xf18899b1bc3f8ca2u, -622}, {0x96f5600f15a7b7e5u, -618},
	{0xbcb2b812db11a5deu, -615}, {0xebdf661791d60f56u, -612},
	{0x936b9fcebb25c996u, -608}, {0xb84687c269ef3bfbu, -605},
	{0xe65829b3046b0afau, -602}, {0x8ff71a0fe2c2e6dcu, -598},
	{0xb3f4e093db73a093u, -595}, {0xe0f218b8d25088b8u, -592},
	{0x8c974f7383725573u, -588}, {0xafbd2350644eead0u, -585},
	{0xdbac6c247d62a584u, -582}, {0x894bc396ce5da772u, -578},
	{0xab9eb47c81f5114fu, -575}, {0xd686619ba27255a3u, -572},
	{0x8613fd0145877586u, -568}, {0xa798fc4196e952e7u, -565},
	{0xd17f3b51fca3a7a1u, -562}, {0x82ef85133de648c5u, -558},
	{0xa3ab66580d5fdaf6u, -555}, {0xcc963fee10b7d1b3u, -552},
	{0xffbbcfe994e5c620u, -549}, {0x9fd561f1fd0f9bd4u, -545},
	{0xc7caba6e7c5382c9u, -542}, {0xf9bd690a1b68637bu, -539},
	{0x9c1661a651213e2du, -535}, {0xc31bfa0fe5698db8u, -532},
	{0xf3e2f893dec3f126u, -529}, {0x986ddb5c6b3a76b8u, -525},
	{0xbe89523386091466u, -522}, {0xee2ba6c0678b597fu, -519},
	{0x94db483840b717f0u, -515}, {0xba121a4650e4ddecu, -512},
	{0xe896a0d7e51e1566u, -509}, {0x915e2486ef32cd60u, -505},
	{0xb5b5ada8aaff80b8u, -502}, {0xe3231912d5bf60e6u, -499},
	{0x8df5efabc5979c90u, -495}, {0xb1736b96b6fd83b4u, -492},
	{0xddd0467c64bce4a1u, -489}, {0x8aa22c0dbef60ee4u, -485},
	{0xad4ab7112eb3929eu, -482}, {0xd89d64d57a607745u, -479},
	{0x87625f056c7c4a8bu, -475}, {0xa93af6c6c79b5d2eu, -472},
	{0xd389b47879823479u, -469}, {0x843610cb4bf160ccu, -465},
	{0xa54394fe1eedb8ffu, -462}, {0xce947a3da6a9273eu, -459},
	{0x811ccc668829b887u, -455}, {0xa163ff802a3426a9u, -452},
	{0xc9bcff6034c13053u, -449}, {0xfc2c3f3841f17c68u, -446},
	{0x9d9ba7832936edc1u, -442}, {0xc5029163f384a931u, -439},
	{0xf64335bcf065d37du, -436}, {0x99ea0196163fa42eu, -432},
	{0xc06481fb9bcf8d3au, -429}, {0xf07da27a82c37088u, -426},
	{0x964e858c91ba2655u, -422}, {0xbbe226efb628afebu, -419},
	{0xeadab0aba3b2dbe5u, -416}, {0x92c8ae6b464fc96fu, -412},
	{0xb77ada0617e3bbcbu, -409}, {0xe55990879ddcaabeu, -406},
	{0x8f57fa54c2a9eab7u, -402}, {0xb32df8e9f3546564u, -399},
	{0xdff9772470297ebdu, -396}, {0x8bfbea76c619ef36u, -392},
	{0xaefae51477a06b04u, -389}, {0xdab99e59958885c5u, -386},
	{0x88b402f7fd75539bu, -382}, {0xaae103b5fcd2a882u, -379},
	{0xd59944a37c0752a2u, -376}, {0x857fcae62d8493a5u, -372},
	{0xa6dfbd9fb8e5b88fu, -369}, {0xd097ad07a71f26b2u, -366},
	{0x825ecc24c8737830u, -362}, {0xa2f67f2dfa90563bu, -359},
	{0xcbb41ef979346bcau, -356}, {0xfea126b7d78186bdu, -353},
	{0x9f24b832e6b0f436u, -349}, {0xc6ede63fa05d3144u, -346},
	{0xf8a95fcf88747d94u, -343}, {0x9b69dbe1b548ce7du, -339},
	{0xc24452da229b021cu, -336}, {0xf2d56790ab41c2a3u, -333},
	{0x97c560ba6b0919a6u, -329}, {0xbdb6b8e905cb600fu, -326},
	{0xed246723473e3813u, -323}, {0x9436c0760c86e30cu, -319},
	{0xb94470938fa89bcfu, -316}, {0xe7958cb87392c2c3u, -313},
	{0x90bd77f3483bb9bau, -309}, {0xb4ecd5f01a4aa828u, -306},
	{0xe2280b6c20dd5232u, -303}, {0x8d590723948a535fu, -299},
	{0xb0af48ec79ace837u, -296}, {0xdcdb1b2798182245u, -293},
	{0x8a08f0f8bf0f156bu, -289}, {0xac8b2d36eed2dac6u, -286},
	{0xd7adf884aa879177u, -283}, {0x86ccbb52ea94baebu, -279},
	{0xa87fea27a539e9a5u, -276}, {0xd29fe4b18e88640fu, -273},
	{0x83a3eeeef9153e89u, -269}, {0xa48ceaaab75a8e2bu, -266},
	{0xcdb02555653131b6u, -263}, {0x808e17555f3ebf12u, -259},
	{0xa0b19d2ab70e6ed6u, -256}, {0xc8de047564d20a8cu, -253},
	{0xfb158592be068d2fu, -250}, {0x9ced737bb6c4183du, -246},
	{0xc428d05aa4751e4du, -243}, {0xf53304714d9265e0u, -240},
	{0x993fe2c6d07b7facu, -236}, {0xbf8fdb78849a5f97u, -233},
	{0xef73d256a5c0f77du, -230}, {0x95a8637627989aaeu, -226},
	{0xbb127c53b17ec159u, -223}, {0xe9d71b689dde71b0u, -220},
	{0x9226712162ab070eu, -216}, {0xb6b00d69bb55c8d1u, -213},
	{0xe45c10c42a2b3b06u, -210}, {0x8eb98a7a9a5b04e3u, -206},
	{0xb267ed1940f1c61cu, -203}, {0xdf01e85f912e37a3u, -200},
	{0x8b61313bbabce2c6u, -196}, {0xae397d8aa96c1b78u, -193},
	{0xd9c7dced53c72256u, -190}, {0x881cea14545c7575u, -186},
	{0xaa242499697392d3u, -183}, {0xd4ad2dbfc3d07788u, -180},
	{0x84ec3c97da624ab5u, -176}, {0xa6274bbdd0fadd62u, -173},
	{0xcfb11ead453994bau, -170}, {0x81ceb32c4b43fcf5u, -166},
	{0xa2425ff75e14fc32u, -163}, {0xcad2f7f5359a3b3eu, -160},
	{0xfd87b5f28300ca0eu, -157}, {0x9e74d1b791e07e48u, -153},
	{0xc612062576589ddbu, -150}, {0xf79687aed3eec551u, -147},
	{0x9abe14cd44753b53u, -143}, {0xc16d9a0095928a27u, -140},
	{0xf1c90080baf72cb1u, -137}, {0x971da05074da7befu, -133},
	{0xbce5086492111aebu, -130}, {0xec1e4a7db69561a5u, -127},
	{0x9392ee8e921d5d07u, -123}, {0xb877aa3236a4b449u, -120},
	{0xe69594bec44de15bu, -117}, {0x901d7cf73ab0acd9u, -113},
	{0xb424dc35095cd80fu, -110}, {0xe12e13424bb40e13u, -107},
	{0x8cbccc096f5088ccu, -103}, {0xafebff0bcb24aaffu, -100},
	{0xdbe6fecebdedd5bfu, -97}, {0x89705f4136b4a597u, -93},
	{0xabcc77118461cefdu, -90}, {0xd6bf94d5e57a42bcu, -87},
	{0x8637bd05af6c69b6u, -83}, {0xa7c5ac471b478423u, -80},
	{0xd1b71758e219652cu, -77}, {0x83126e978d4fdf3bu, -73},
	{0xa3d70a3d70a3d70au, -70}, {0xcccccccccccccccdu, -67},
	{0x8000000000000000u, -63}, {0xa000000000000000u, -60},
	{0xc800000000000000u, -57}, {0xfa00000000000000u, -54},
	{0x9c40000000000000u, -50}, {0xc350000000000000u, -47},
	{0xf424000000000000u, -44}, {0x9896800000000000u, -40},
	{0xbebc200000000000u, -37}, {0xee6b280000000000u, -34},
	{0x9502f90000000000u, -30}, {0xba43b74000000000u, -27},
	{0xe8d4a51000000000u, -24}, {0x9184e72a00000000u, -20},
	{0xb5e620f480000000u, -17}, {0xe35fa931a0000000u, -14},
	{0x8e1bc9bf04000000u, -10}, {0xb1a2bc2ec5000000u, -7},
	{0xde0b6b3a76400000u, -4}, {0x8ac7230489e80000u, 0},
	{0xad78ebc5ac620000u, 3}, {0xd8d726b7177a8000u, 6},
	{0x878678326eac9000u, 10}, {0xa968163f0a57b400u, 13},
	{0xd3c21bcecceda100u, 16}, {0x84595161401484a0u, 20},
	{0xa56fa5b99019a5c8u, 23}, {0xcecb8f27f4200f3au, 26},
	{0x813f3978f8940984u, 30}, {0xa18f07d736b90be5u, 33},
	{0xc9f2c9cd04674edfu, 36}, {0xfc6f7c4045812296u, 39},
	{0x9dc5ada82b70b59eu, 43}, {0xc5371912364ce305u, 46},
	{0xf684df56c3e01bc7u, 49}, {0x9a130b963a6c115cu, 53},
	{0xc097ce7bc90715b3u, 56}, {0xf0bdc21abb48db20u, 59},
	{0x96769950b50d88f4u, 63}, {0xbc143fa4e250eb31u, 66},
	{0xeb194f8e1ae525fdu, 69}, {0x92efd1b8d0cf37beu, 73},
	{0xb7abc627050305aeu, 76}, {0xe596b7b0c643c719u, 79},
	{0x8f7e32ce7bea5c70u, 83}, {0xb35dbf821ae4f38cu, 86},
	{0xe0352f62a19e306fu, 89}, {0x8c213d9da502de45u, 93},
	{0xaf298d050e4395d7u, 96}, {0xdaf3f04651d47b4cu, 99},
	{0x88d8762bf324cd10u, 103}, {0xab0e93b6efee0054u, 106},
	{0xd5d238a4abe98068u, 109}, {0x85a36366eb71f041u, 113},
	{0xa70c3c40a64e6c52u, 116}, {0xd0cf4b50cfe20766u, 119},
	{0x82818f1281ed44a0u, 123}, {0xa321f2d7226895c8u, 126},
	{0xcbea6f8ceb02bb3au, 129}, {0xfee50b7025c36a08u, 132},
	{0x9f4f2726179a2245u, 136}, {0xc722f0ef9d80aad6u, 139},
	{0xf8ebad2b84e0d58cu, 142}, {0x9b934c3b330c8577u, 146},
	{0xc2781f49ffcfa6d5u, 149}, {0xf316271c7fc3908bu, 152},
	{0x97edd871cfda3a57u, 156}, {0xbde94e8e43d0c8ecu, 159},
	{0xed63a231d4c4fb27u, 162}, {0x945e455f24fb1cf9u, 166},
	{0xb975d6b6ee39e437u, 169}, {0xe7d34c64a9c85d44u, 172},
	{0x90e40fbeea1d3a4bu, 176}, {0xb51d13aea4a488ddu, 179},
	{0xe264589a4dcdab15u, 182}, {0x8d7eb76070a08aedu, 186},
	{0xb0de65388cc8ada8u, 189}, {0xdd15fe86affad912u, 192},
	{0x8a2dbf142dfcc7abu, 196}, {0xacb92ed9397bf996u, 199},
	{0xd7e77a8f87daf7fcu, 202}, {0x86f0ac99b4e8dafdu, 206},
	{0xa8acd7c0222311bdu, 209}, {0xd2d80db02aabd62cu, 212},
	{0x83c7088e1aab65dbu, 216}, {0xa4b8cab1a1563f52u, 219},
	{0xcde6fd5e09abcf27u, 222}, {0x80b05e5ac60b6178u, 226},
	{0xa0dc75f1778e39d6u, 229}, {0xc913936dd571c84cu, 232},
	{0xfb5878494ace3a5fu, 235}, {0x9d174b2dcec0e47bu, 239},
	{0xc45d1df942711d9au, 242}, {0xf5746577930d6501u, 245},
	{0x9968bf6abbe85f20u, 249}, {0xbfc2ef456ae276e9u, 252},
	{0xefb3ab16c59b14a3u, 255}, {0x95d04aee3b80ece6u, 259},
	{0xbb445da9ca61281fu, 262}, {0xea1575143cf97227u, 265},
	{0x924d692ca61be758u, 269}, {0xb6e0c377cfa2e12eu, 272},
	{0xe498f455c38b997au, 275}, {0x8edf98b59a373fecu, 279},
	{0xb2977ee300c50fe7u, 282}, {0xdf3d5e9bc0f653e1u, 285},
	{0x8b865b215899f46du, 289}, {0xae67f1e9aec07188u, 292},
	{0xda01ee641a708deau, 295}, {0x884134fe908658b2u, 299},
	{0xaa51823e34a7eedfu, 302}, {0xd4e5e2cdc1d1ea96u, 305},
	{0x850fadc09923329eu, 309}, {0xa6539930bf6bff46u, 312},
	{0xcfe87f7cef46ff17u, 315}, {0x81f14fae158c5f6eu, 319},
	{0xa26da3999aef774au, 322}, {0xcb090c8001ab551cu, 325},
	{0xfdcb4fa002162a63u, 328}, {0x9e9f11c4014dda7eu, 332},
	{0xc646d63501a1511eu, 335}, {0xf7d88bc24209a565u, 338},
	{0x9ae757596946075fu, 342}, {0xc1a12d2fc3978937u, 345},
	{0xf209787bb47d6b85u, 348}, {0x9745eb4d50ce6333u, 352},
	{0xbd176620a501fc00u, 355}, {0xec5d3fa8ce427b00u, 358},
	{0x93ba47c980e98ce0u, 362}, {0xb8a8d9bbe123f018u, 365},
	{0xe6d3102ad96cec1eu, 368}, {0x9043ea1ac7e41393u, 372},
	{0xb454e4a179dd1877u, 375}, {0xe16a1dc9d8545e95u, 378},
	{0x8ce2529e2734bb1du, 382}, {0xb01ae745b101e9e4u, 385},
	{0xdc21a1171d42645du, 388}, {0x899504ae72497ebau, 392},
	{0xabfa45da0edbde69u, 395}, {0xd6f8d7509292d603u, 398},
	{0x865b86925b9bc5c2u, 402}, {0xa7f26836f282b733u, 405},
	{0xd1ef0244af2364ffu, 408}, {0x8335616aed761f1fu, 412},
	{0xa402b9c5a8d3a6e7u, 415}, {0xcd036837130890a1u, 418},
	{0x802221226be55a65u, 422}, {0xa02aa96b06deb0feu, 425},
	{0xc83553c5c8965d3du, 428}, {0xfa42a8b73abbf48du, 431},
	{0x9c69a97284b578d8u, 435}, {0xc38413cf25e2d70eu, 438},
	{0xf46518c2ef5b8cd1u, 441}, {0x98bf2f79d5993803u, 445},
	{0xbeeefb584aff8604u, 448}, {0xeeaaba2e5dbf6785u, 451},
	{0x952ab45cfa97a0b3u, 455}, {0xba756174393d88e0u, 458},
	{0xe912b9d1478ceb17u, 461}, {0x91abb422ccb812efu, 465},
	{0xb616a12b7fe617aau, 468}, {0xe39c49765fdf9d95u, 471},
	{0x8e41ade9fbebc27du, 475}, {0xb1d219647ae6b31cu, 478},
	{0xde469fbd99a05fe3u, 481}, {0x8aec23d680043beeu, 485},
	{0xada72ccc20054aeau, 488}, {0xd910f7ff28069da4u, 491},
	{0x87aa9aff79042287u, 495}, {0xa99541bf57452b28u, 498},
	{0xd3fa922f2d1675f2u, 501}, {0x847c9b5d7c2e09b7u, 505},
	{0xa59bc234db398c25u, 508}, {0xcf02b2c21207ef2fu, 511},
	{0x8161afb94b44f57du, 515}, {0xa1ba1ba79e1632dcu, 518},
	{0xca28a291859bbf93u, 521}, {0xfcb2cb35e702af78u, 524},
	{0x9defbf01b061adabu, 528}, {0xc56baec21c7a1916u, 531},
	{0xf6c69a72a3989f5cu, 534}, {0x9a3c2087a63f6399u, 538},
	{0xc0cb28a98fcf3c80u, 541}, {0xf0fdf2d3f3c30b9fu, 544},
	{0x969eb7c47859e744u, 548}, {0xbc4665b596706115u, 551},
	{0xeb57ff22fc0c795au, 554}, {0x9316ff75dd87cbd8u, 558},
	{0xb7dcbf5354e9beceu, 561}, {0xe5d3ef282a242e82u, 564},
	{0x8fa475791a569d11u, 568}, {0xb38d92d760ec4455u, 571},
	{0xe070f78d3927556bu, 574}, {0x8c469ab843b89563u, 578},
	{0xaf58416654a6babbu, 581}, {0xdb2e51bfe9d0696au, 584},
	{0x88fcf317f22241e2u, 588}, {0xab3c2fddeeaad25bu, 591},
	{0xd60b3bd56a5586f2u, 594}, {0x85c7056562757457u, 598},
	{0xa738c6bebb12d16du, 601}, {0xd106f86e69d785c8u, 604},
	{0x82a45b450226b39du, 608}, {0xa34d721642b06084u, 611},
	{0xcc20ce9bd35c78a5u, 614}, {0xff290242c83396ceu, 617},
	{0x9f79a169bd203e41u, 621}, {0xc75809c42c684dd1u, 624},
	{0xf92e0c3537826146u, 627}, {0x9bbcc7a142b17cccu, 631},
	{0xc2abf989935ddbfeu, 634}, {0xf356f7ebf83552feu, 637},
	{0x98165af37b2153dfu, 641}, {0xbe1bf1b059e9a8d6u, 644},
	{0xeda2ee1c7064130cu, 647}, {0x9485d4d1c63e8be8u, 651},
	{0xb9a74a0637ce2ee1u, 654}, {0xe8111c87c5c1ba9au, 657},
	{0x910ab1d4db9914a0u, 661}, {0xb54d5e4a127f59c8u, 664},
	{0xe2a0b5dc971f303au, 667}, {0x8da471a9de737e24u, 671},
	{0xb10d8e1456105dadu, 674}, {0xdd50f1996b947519u, 677},
	{0x8a5296ffe33cc930u, 681}, {0xace73cbfdc0bfb7bu, 684},
	{0xd8210befd30efa5au, 687}, {0x8714a775e3e95c78u, 691},
	{0xa8d9d1535ce3b396u, 694}, {0xd31045a8341ca07cu, 697},
	{0x83ea2b892091e44eu, 701}, {0xa4e4b66b68b65d61u, 704},
	{0xce1de40642e3f4b9u, 707}, {0x80d2ae83e9ce78f4u, 711},
	{0xa1075a24e4421731u, 714}, {0xc94930ae1d529cfdu, 717},
	{0xfb9b7cd9a4a7443cu, 720}, {0x9d412e0806e88aa6u, 724},
	{0xc491798a08a2ad4fu, 727}, {0xf5b5d7ec8acb58a3u, 730},
	{0x9991a6f3d6bf1766u, 734}, {0xbff610b0cc6edd3fu, 737},
	{0xeff394dcff8a948fu, 740}, {0x95f83d0a1fb69cd9u, 744},
	{0xbb764c4ca7a44410u, 747}, {0xea53df5fd18d5514u, 750},
	{0x92746b9be2f8552cu, 754}, {0xb7118682dbb66a77u, 757},
	{0xe4d5e82392a40515u, 760}, {0x8f05b1163ba6832du, 764},
	{0xb2c71d5bca9023f8u, 767}, {0xdf78e4b2bd342cf7u, 770},
	{0x8bab8eefb6409c1au, 774}, {0xae9672aba3d0c321u, 777},
	{0xda3c0f568cc4f3e9u, 780}, {0x8865899617fb1871u, 784},
	{0xaa7eebfb9df9de8eu, 787}, {0xd51ea6fa85785631u, 790},
	{0x8533285c936b35dfu, 794}, {0xa67ff273b8460357u, 797},
	{0xd01fef10a657842cu, 800}, {0x8213f56a67f6b29cu, 804},
	{0xa298f2c501f45f43u, 807}, {0xcb3f2f7642717713u, 810},
	{0xfe0efb53d30dd4d8u, 813}, {0x9ec95d1463e8a507u, 817},
	{0xc67bb4597ce2ce49u, 820}, {0xf81aa16fdc1b81dbu, 823},
	{0x9b10a4e5e9913129u, 827}, {0xc1d4ce1f63f57d73u, 830},
	{0xf24a01a73cf2dcd0u, 833}, {0x976e41088617ca02u, 837},
	{0xbd49d14aa79dbc82u, 840}, {0xec9c459d51852ba3u, 843},
	{0x93e1ab8252f33b46u, 847}, {0xb8da1662e7b00a17u, 850},
	{0xe7109bfba19c0c9du, 853}, {0x906a617d450187e2u, 857},
	{0xb484f9dc9641e9dbu, 860}, {0xe1a63853bbd26451u, 863},
	{0x8d07e33455637eb3u, 867}, {0xb049dc016abc5e60u, 870},
	{0xdc5c5301c56b75f7u, 873}, {0x89b9b3e11b6329bbu, 877},
	{0xac2820d9623bf429u, 880}, {0xd732290fbacaf134u, 883},
	{0x867f59a9d4bed6c0u, 887}, {0xa81f301449ee8c70u, 890},
	{0xd226fc195c6a2f8cu, 893}, {0x83585d8fd9c25db8u, 897},
	{0xa42e74f3d032f526u, 900}, {0xcd3a1230c43fb26fu, 903},
	{0x80444b5e7aa7cf85u, 907}, {0xa0555e361951c367u, 910},
	{0xc86ab5c39fa63441u, 913}, {0xfa856334878fc151u, 916},
	{0x9c935e00d4b9d8d2u, 920}, {0xc3b8358109e84f07u, 923},
	{0xf4a642e14c6262c9u, 926}, {0x98e7e9cccfbd7dbeu, 930},
	{0xbf21e44003acdd2du, 933}, {0xeeea5d5004981478u, 936},
	{0x95527a5202df0ccbu, 940}, {0xbaa718e68396cffeu, 943},
	{0xe950df20247c83fdu, 946}, {0x91d28b7416cdd27eu, 950},
	{0xb6472e511c81471eu, 953}, {0xe3d8f9e563a198e5u, 956},
	{0x8e679c2f5e44ff8fu, 960}, {0xb201833b35d63f73u, 963},
	{0xde81e40a034bcf50u, 966}, {0x8b112e86420f6192u, 970},
	{0xadd57a27d29339f6u, 973}, {0xd94ad8b1c7380874u, 976},
	{0x87cec76f1c830549u, 980}, {0xa9c2794ae3a3c69bu, 983},
	{0xd433179d9c8cb841u, 986}, {0x849feec281d7f329u, 990},
	{0xa5c7ea73224deff3u, 993}, {0xcf39e50feae16bf0u, 996},
	{0x81842f29f2cce376u, 1000}, {0xa1e53af46f801c53u, 1003},
	{0xca5e89b18b602368u, 1006}, {0xfcf62c1dee382c42u, 1009},
	{0x9e19db92b4e31ba9u, 1013}, {0xc5a05277621be294u, 1016},
	{0xf70867153aa2db39u, 1019}, {0x9a65406d44a5c903u, 1023},
	{0xc0fe908895cf3b44u, 1026}, {0xf13e34aabb430a15u, 1029},
	{0x96c6e0eab509e64du, 1033},
};
/* clang-format on */

#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 u128;
#define HAVE_U128 1
#else
#define HAVE_U128 0
#endif

#if HAVE_U128

/* 10^n for n = 0..19 */
static const uint64_t p10[20] = {
	1u,
	10u,
	100u,
	1000u,
	10000u,
	100000u,
	1000000u,
	10000000u,
	100000000u,
	1000000000u,
	10000000000u,
	100000000000u,
	1000000000000u,
	10000000000000u,
	100000000000000u,
	1000000000000000u,
	10000000000000000u,
	100000000000000000u,
	1000000000000000000u,
	10000000000000000000u,
};

/* v = m * 2^e2 with 2^52 <= m < 2^53, for a positive normal double. */
struct dec {
	uint64_t m;
	int e2;
	bool lower_closer; /* m == 2^52 and not the smallest normal: the predecessor is closer */
};

/* x = m * 10^s in units of 2^-sh; false when outside the table or the fixed-point range. */
static bool scale(const struct dec *d, int s, u128 *x, int *sh)
{
	const struct pow10 *p;

	if (s < POW10_MIN || s > POW10_MAX)
		return false;
	p = &pow10_tab[s - POW10_MIN];
	*x = (u128)d->m * p->f;
	*sh = -(d->e2 + p->e);
	return *sh > 1 && *sh < 127;
}

/*
 * Round v to P significant digits given its decimal exponent k (10^k <= v < 10^(k+1)):
 * D has P digits, or is 10^P when the rounding carried. 0 when certain, -1 when the rounding
 * is too close to call, -2 when k is wrong (the scaled value has fewer or more than P digits).
 */
static int round_digits(const struct dec *d, int P, int k, uint64_t *D, u128 *xo, int *sho)
{
	u128 x, mask, F, half, err = (d->m >> 1) + 2;
	uint64_t I;
	int sh;

	if (!scale(d, P - 1 - k, &x, &sh))
		return -1;
	mask = ((u128)1 << sh) - 1;
	I = (uint64_t)(x >> sh);
	F = x & mask;
	half = (u128)1 << (sh - 1);
	if (I < p10[P - 1])
		return I == p10[P - 1] - 1 && F > mask - err ? -1 : -2;
	if (I >= p10[P])
		return I == p10[P] && F < err ? -1 : -2;
	if (F + err >= half && F <= half + err)
		return -1;
	*D = I + (F > half);
	*xo = x;
	*sho = sh;
	return 0;
}

/*
 * Does D * 10^(k-P+1) read back as v? x and sh are the scaled v of round_digits() for this P.
 * 1 yes, 0 no, -1 too close to a boundary to tell.
 */
static int reads_back(const struct dec *d, uint64_t D, u128 x, int sh, int P, int k)
{
	uint64_t f = pow10_tab[P - 1 - k - POW10_MIN].f; /* the significand scale() used */
	u128 hw_hi = f / 2, hw_lo = d->lower_closer ? f / 4 : f / 2, err = (d->m >> 1) + 4;
	u128 C = (u128)D << sh;
	u128 hi = x + hw_hi, lo = x - hw_lo;

	if ((C > hi ? C - hi : hi - C) <= err || (C > lo ? C - lo : lo - C) <= err)
		return -1;
	return C < hi && C > lo;
}

static bool decompose(double v, struct dec *d)
{
	uint64_t b;
	unsigned ex;

	memcpy(&b, &v, sizeof(b));
	ex = (unsigned)(b >> 52) & 0x7ff;
	if (ex == 0 || ex == 0x7ff)
		return false; /* zero, subnormal, Inf, NaN */
	d->m = (b & ((UINT64_C(1) << 52) - 1)) | (UINT64_C(1) << 52);
	d->e2 = (int)ex - 1075;
	d->lower_closer = d->m == (UINT64_C(1) << 52) && ex > 1;
	return true;
}

/*
 * Decimal exponent of |v|: floor(log10(v)), settled with the 17-digit scaling, whose result
 * (D, x, sh for P = 17) is handed back for reuse.
 */
static int exponent(const struct dec *d, int *k, uint64_t *D, u128 *x, int *sh)
{
	int r, tries, b = d->e2 + 52; /* floor(log2(v)) */

	/* floor(b * log10(2)) with 78913 / 2^18 ~ log10(2), exact for |b| < 1700 */
	*k = b >= 0 ? (b * 78913) >> 18 : -((-b * 78913 + (1 << 18) - 1) >> 18);
	for (tries = 0; tries < 3; tries++) {
		r = round_digits(d, 17, *k, D, x, sh);
		if (r != -2)
			return r;
		/* recompute which way: compare the integer part with 10^16 */
		if (!scale(d, 16 - *k, x, sh))
			return -1;
		if ((uint64_t)(*x >> *sh) < p10[16])
			(*k)--;
		else
			(*k)++;
	}
	return -1;
}

/*
 * Write D (P digits, trailing zeros allowed) with decimal exponent k the way %.{P}g does,
 * with a leading '-' if neg. Returns the length; *plain says it has neither '.' nor 'e'.
 */
static int format_g(bool neg, uint64_t D, int P, int k, char *buf, bool *plain)
{
	char dig[24];
	int n = P, i, len = 0;

	if (D == p10[P]) { /* rounding carried into a new digit */
		D = p10[P - 1];
		k++;
	}
	for (i = P - 1; i >= 0; i--) {
		dig[i] = (char)('0' + D % 10);
		D /= 10;
	}
	while (n > 1 && dig[n - 1] == '0')
		n--;
	if (neg)
		buf[len++] = '-';
	*plain = false;
	if (k < -4 || k >= P) {
		buf[len++] = dig[0];
		if (n > 1) {
			buf[len++] = '.';
			memcpy(buf + len, dig + 1, (size_t)n - 1);
			len += n - 1;
		}
		buf[len++] = 'e';
		buf[len++] = k < 0 ? '-' : '+';
		if (k < 0)
			k = -k;
		if (k >= 100)
			buf[len++] = (char)('0' + k / 100);
		buf[len++] = (char)('0' + k / 10 % 10);
		buf[len++] = (char)('0' + k % 10);
	} else if (k >= 0) {
		for (i = 0; i <= k; i++)
			buf[len++] = i < n ? dig[i] : '0';
		if (n > k + 1) {
			buf[len++] = '.';
			memcpy(buf + len, dig + k + 1, (size_t)(n - k - 1));
			len += n - k - 1;
		} else {
			*plain = true;
		}
	} else {
		buf[len++] = '0';
		buf[len++] = '.';
		for (i = 0; i < -k - 1; i++)
			buf[len++] = '0';
		memcpy(buf + len, dig, (size_t)n);
		len += n;
	}
	buf[len] = '\0';
	return len;
}

/* 0 with the text in buf, or -1: take the slow path. */
static int fast_json(double v, char *buf)
{
	struct dec d;
	uint64_t D, D17;
	u128 x, x17;
	int k, P, sh, sh17, r, len;
	bool plain;

	if (!decompose(fabs(v), &d) || exponent(&d, &k, &D17, &x17, &sh17))
		return -1;
	for (P = 15; P <= 16; P++) {
		if (round_digits(&d, P, k, &D, &x, &sh))
			return -1;
		r = reads_back(&d, D, x, sh, P, k);
		if (r < 0)
			return -1;
		if (r)
			break;
	}
	if (P == 17) /* 17 digits always read back */
		D = D17;
	len = format_g(signbit(v), D, P, k, buf, &plain);
	if (plain) {
		memcpy(buf + len, ".0", 3);
		len += 2;
	}
	return len;
}

static int fast_g6(double v, char *buf)
{
	struct dec d;
	uint64_t D;
	u128 x;
	int k, sh;
	bool plain;

	if (!decompose(fabs(v), &d) || exponent(&d, &k, &D, &x, &sh))
		return -1;
	if (round_digits(&d, 6, k, &D, &x, &sh))
		return -1;
	return format_g(signbit(v), D, 6, k, buf, &plain);
}

#else /* no 128-bit integers: always the slow path */

static int fast_json(double v, char *buf)
{
	(void)v;
	(void)buf;
	return -1;
}

static int fast_g6(double v, char *buf)
{
	(void)v;
	(void)buf;
	return -1;
}

#endif

int fp__dbg_fmt_json(double v, char *buf, size_t size)
{
	int n;

	if (!isfinite(v) || size < 32)
		return FP_EINVAL;
	/* integral values: the writer's own fast path */
	if (!(fabs(v) < 1e15 && v == trunc(v)) && (n = fast_json(v, buf)) >= 0)
		return n;
	return fp_json_format_double(v, buf, size);
}

int fp__dbg_fmt_g6(double v, char *buf, size_t size)
{
	int n;

	if (size < 32)
		return FP_EINVAL;
	if (isfinite(v) && v != 0 && (n = fast_g6(v, buf)) >= 0)
		return n;
	n = snprintf(buf, size, "%.6g", v);
	return n < 0 ? FP_EINVAL : n;
}
