// The BugHunt shop's cart (shop.hpp); its page is compiled in from
// examples/bughunt/ by sim/ui/web/embed_shop.cmake.
#include "relsim/ui/shop.hpp"

#include <array>

#include "relsim/core/json.hpp"

namespace relsim::ui {

std::span<const CartItem> shop_cart() {
  static constexpr std::array<CartItem, 3> kCart = {{{"Desk lamp", 150.00, 2}, {"Keyboard", 89.00, 1},
                                                     {"Mouse", 49.00, 2}}};
  return kCart;
}

std::string cart_json() {
  Json items = Json::array();
  for (const CartItem& item : shop_cart())
    items.push_back({{"name", std::string(item.name)}, {"price", item.price}, {"quantity", item.quantity}});
  return Json{{"items", items}, {"currency", "USD"}}.dump();
}

}  // namespace relsim::ui
